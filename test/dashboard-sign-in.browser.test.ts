import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { describeInBrowser, launchBrowser, listen, PHONE, Visit } from "./helpers/browser.js";
import { KEYS } from "./helpers/fixture.js";

describeInBrowser("dashboard sign-in in Chromium", () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  beforeAll(async () => {
    t = await startTestApp();
    base = await listen(t);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("signs in with a key (HttpOnly, SameSite=Strict cookie) and signs out", async () => {
    const visit = await Visit.open(browser, base);
    try {
      expect(await visit.goto("/app")).toBe(200);
      await visit.check("sign-in");
      await visit.signIn(KEYS.acme);
      const cookie = await visit.sessionCookie();
      expect(cookie).toMatchObject({
        httpOnly: true,
        sameSite: "Strict",
        secure: false,
        path: "/",
      });
      await expect(visit.page.getByRole("button", { name: "Sign out" })).toBeDefined();
      await visit.check();
      await Promise.all([
        visit.page.waitForNavigation(),
        visit.page.getByRole("button", { name: "Sign out" }).click(),
      ]);
      expect(await visit.sessionCookie()).toBeUndefined();
      expect(await visit.page.getByLabel("API key").count()).toBe(1);
      await visit.check();
    } finally {
      await visit.close();
    }
  });

  it("shows an error for a wrong key, readable on a phone", async () => {
    const visit = await Visit.open(browser, base, PHONE);
    try {
      await visit.signIn("wrong-key-0123456789abcdef0123456789");
      expect(await visit.page.getByRole("alert").textContent()).toContain("Invalid API key");
      expect(await visit.sessionCookie()).toBeUndefined();
      // The 401 of the form is the one console error Chromium logs ("Failed to load resource").
      visit.errors.splice(0);
      await visit.check("sign-in-error-phone");
    } finally {
      await visit.close();
    }
  });
});
