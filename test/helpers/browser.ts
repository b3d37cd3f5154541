import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import axe from "axe-core";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { TestApp } from "./app.js";

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it), or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Browser tests run where Chromium is installed. Without it they are skipped on a workstation
 * but FAIL in CI (`CI` set; .ci/run sets it): a missing browser must never pass unnoticed.
 */
export function describeInBrowser(name: string, body: () => void): void {
  if (existsSync(CHROMIUM)) {
    describe(name, body);
  } else if (process.env.CI !== undefined && process.env.CI !== "") {
    describe(name, () => {
      it("needs Chromium", () => {
        throw new Error(`Chromium not found at ${CHROMIUM} (install it, or set CHROMIUM_PATH)`);
      });
    });
  } else {
    describe.skip(name, body);
  }
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

/** Makes the test app listen on a free loopback port; returns `http://127.0.0.1:PORT`. */
export async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ host: "127.0.0.1", port: 0 });
  const address = t.app.server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return `http://127.0.0.1:${port}`;
}

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

/**
 * One browser context (its own cookies) on the app at `base`. It records every request that
 * would leave 127.0.0.1 (and aborts it), every console error and uncaught page error; `clean`
 * asserts there were none.
 */
export class Visit {
  readonly outside: string[] = [];
  readonly errors: string[] = [];

  private constructor(
    readonly base: string,
    readonly context: BrowserContext,
    readonly page: Page,
  ) {}

  static async open(
    browser: Browser,
    base: string,
    viewport: { width: number; height: number } = DESKTOP,
  ): Promise<Visit> {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    const visit = new Visit(base, context, page);
    await context.route("**/*", (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === "127.0.0.1") return route.continue();
      visit.outside.push(url.href);
      return route.abort();
    });
    page.on("console", (message) => {
      if (message.type() === "error") visit.errors.push(`console: ${message.text()}`);
    });
    page.on("pageerror", (error) => visit.errors.push(`page error: ${error.message}`));
    return visit;
  }

  /** Opens `path` (relative to the app) and returns the HTTP status of the answer. */
  async goto(path: string): Promise<number> {
    const response = await this.page.goto(`${this.base}${path}`);
    return response?.status() ?? 0;
  }

  /** Signs in through the form at /app with `key`; resolves on the page it leads to. */
  async signIn(key: string): Promise<void> {
    await this.goto("/app");
    await this.page.getByLabel("API key").fill(key);
    await Promise.all([
      this.page.waitForNavigation(),
      this.page.getByRole("button", { name: "Sign in" }).click(),
    ]);
  }

  /** The cookie the dashboard set (its flags included), if any. */
  async sessionCookie() {
    const cookies = await this.context.cookies(this.base);
    return cookies.find((c) => c.name === "tr_session" || c.name === "__Host-tr_session");
  }

  /** The text of every row of the table with caption `caption`, cells joined by " | ". */
  async tableRows(caption: string): Promise<string[]> {
    const table = this.page.locator("table", {
      has: this.page.locator("caption", { hasText: caption }),
    });
    const rows = await table.locator("tbody tr").all();
    const texts: string[] = [];
    for (const row of rows) {
      const cells = await row.locator("th, td").allTextContents();
      texts.push(cells.map((c) => c.trim().replace(/\s+/g, " ")).join(" | "));
    }
    return texts;
  }

  /**
   * The page as it is now passes: axe-core finds no serious or critical violation; nothing
   * left 127.0.0.1; no console error. With `screenshot`, the whole page is written to
   * docs/screenshots/<screenshot>.png (shown in the README).
   */
  async check(screenshot?: string): Promise<void> {
    const violations = await axeViolations(this.page);
    expect(violations, `axe on ${this.page.url()}`).toEqual([]);
    expect(this.outside, "requests that left 127.0.0.1").toEqual([]);
    expect(this.errors, `console errors on ${this.page.url()}`).toEqual([]);
    if (screenshot !== undefined) {
      await mkdir(SCREENSHOTS, { recursive: true });
      await this.page.screenshot({ path: `${SCREENSHOTS}/${screenshot}.png`, fullPage: true });
    }
  }

  async close(): Promise<void> {
    await this.context.close();
  }
}

const SCREENSHOTS = new URL("../../docs/screenshots", import.meta.url).pathname;

/**
 * axe-core's serious and critical violations on the page, as "rule: target" lines. axe is
 * evaluated from node_modules through the DevTools protocol, which the page's CSP does not
 * govern, so the page keeps its real policy while it is checked.
 */
async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate<boolean>(`"axe" in window`))) await page.evaluate(axe.source);
  const results = await page.evaluate<{ id: string; impact: string; targets: string[] }[]>(
    `axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(" ")) })))`,
  );
  return results
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.targets.join(", ")}`);
}
