import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Services } from "../src/services/index.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { describeInBrowser, launchBrowser, listen, Visit } from "./helpers/browser.js";
import { KEYS } from "./helpers/fixture.js";

/**
 * "Download CSV" in Chromium: the CSV is saved under the name the server gives it, and any
 * other answer (the sign-in page of an expired session, the page saying every export slot is
 * taken) is shown as the page it is, not saved as a file.
 */
describeInBrowser("the reports page's CSV download in Chromium", () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  beforeAll(async () => {
    t = await startTestApp({ env: { MAX_EXPORTS_PER_KEY: "1" } });
    base = await listen(t);
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function reportsPage() {
    const visit = await Visit.open(browser, base);
    await visit.signIn(KEYS.acme);
    expect(await visit.goto("/app/reports")).toBe(200);
    const downloads: string[] = [];
    visit.page.on("download", (d) => downloads.push(d.suggestedFilename()));
    const link = visit.page.getByRole("link", { name: "Download CSV" });
    return { visit, downloads, link };
  }

  it("saves the CSV as reports.csv and stays on the page", async () => {
    const { visit, link } = await reportsPage();
    const [download] = await Promise.all([visit.page.waitForEvent("download"), link.click()]);
    expect(download.suggestedFilename()).toBe("reports.csv");
    expect(await download.failure()).toBeNull();
    expect(new URL(visit.page.url()).pathname).toBe("/app/reports");
    await visit.close();
  });

  it("shows the sign-in page when the session has ended", async () => {
    const { visit, downloads, link } = await reportsPage();
    await visit.context.clearCookies();
    await Promise.all([
      visit.page.waitForURL((url) => url.pathname === "/app", { timeout: 10_000 }),
      link.click(),
    ]);
    await expect(visit.page.getByLabel("API key").count()).resolves.toBe(1);
    expect(downloads).toEqual([]);
    await visit.close();
  });

  it("shows the page saying so when every export slot of the key is taken", async () => {
    const { visit, downloads, link } = await reportsPage();
    // An API export of the same key that has not begun to answer holds the one slot.
    const exportReports = t.services.exportReports;
    let release = () => {};
    let reached = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const begun = new Promise<void>((resolve) => (reached = resolve));
    t.services.exportReports = async function* (...args: Parameters<Services["exportReports"]>) {
      reached();
      await held;
      yield* exportReports(...args);
    };
    const api = fetch(`${base}/api/v1/reports`, {
      headers: { authorization: KEYS.acme, accept: "text/csv" },
    });
    try {
      await begun; // past the slot's hook: the slot is taken

      const [answer] = await Promise.all([
        visit.page.waitForResponse((r) => r.url().includes("/app/reports.csv"), {
          timeout: 10_000,
        }),
        link.click(),
      ]);
      expect(answer.status()).toBe(429);
      await visit.page.waitForURL((url) => url.pathname === "/app/reports.csv");
      await expect(visit.page.locator("main").textContent()).resolves.toContain(
        "Too many concurrent exports: at most 1 per API key",
      );
      expect(downloads).toEqual([]);
    } finally {
      release();
      t.services.exportReports = exportReports;
      expect((await api).status).toBe(200);
    }
    await visit.close();
  });
});
