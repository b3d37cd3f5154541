import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeInBrowser, launchBrowser, listen, PHONE, Visit } from "./helpers/browser.js";
import { SCORECARD_KEYS, scorecardWorld, type World } from "./helpers/scorecard-world.js";
import { rejectedBatch, renameSubmission } from "./helpers/submission-history.js";

const REJECTED_ID = "5e1f0c2a-7b3d-4c8e-9a61-2d4f6b8c0e13";

describeInBrowser("the submissions history in Chromium", () => {
  let world: World;
  let browser: Browser;
  let base: string;
  beforeAll(async () => {
    world = await scorecardWorld();
    await renameSubmission(world, await rejectedBatch(world), REJECTED_ID);
    world.setClock(new Date("2025-03-08T11:00:00Z"));
    base = await listen(world.t);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await world?.t.close();
  });

  it("filters to the rejected submission and shows its problems with their codes", async () => {
    const visit = await Visit.open(browser, base);
    try {
      await visit.signIn(SCORECARD_KEYS.acme);
      await visit.page.getByRole("link", { name: "Submissions" }).click();
      await visit.page.waitForURL("**/app/submissions");
      expect(await visit.tableRows("Submissions (12 matching)")).toHaveLength(12);
      await visit.page.getByLabel("Status").selectOption("rejected");
      await Promise.all([
        visit.page.waitForNavigation(),
        visit.page.getByRole("button", { name: "Apply" }).click(),
      ]);
      expect(await visit.tableRows("Submissions (1 matching)")).toEqual([
        "2025-03-08 10:00:00 UTC | v2 | No | Rejected | 3 | 0 | 0 | 2 | — | nightly-2025-03-07",
      ]);
      await visit.check();
      await Promise.all([
        visit.page.waitForURL(`**/app/submissions/${REJECTED_ID}`),
        visit.page.getByRole("link", { name: "2025-03-08 10:00:00 UTC" }).click(),
      ]);
      expect(await visit.page.locator("h1").textContent()).toBe(
        "Submission of 2025-03-08 10:00:00 UTC",
      );
      expect(await visit.tableRows("Problems (2)")).toEqual([
        "data.0.date | Invalid date, expected YYYY-MM-DD | invalid_date",
        "data.2.baseCoinId | Base coin with id 'chainlnk' does not match any valid ticker id | unknown_base_coin",
      ]);
      await visit.check("market-maker-submission");
    } finally {
      await visit.close();
    }
  });

  it("fits a phone-width screen", async () => {
    const visit = await Visit.open(browser, base, PHONE);
    try {
      await visit.signIn(SCORECARD_KEYS.acme);
      expect(await visit.goto(`/app/submissions/${REJECTED_ID}`)).toBe(200);
      expect(await visit.tableRows("Problems (2)")).toHaveLength(2);
      expect(await visit.goto("/app/submissions")).toBe(200);
      const width = await visit.page.evaluate("document.documentElement.scrollWidth");
      expect(width).toBeLessThanOrEqual(PHONE.width);
      await visit.check();
    } finally {
      await visit.close();
    }
  });
});
