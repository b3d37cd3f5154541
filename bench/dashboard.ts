/**
 * The dashboard part of the benchmark (issue 14), over the listing and scorecard dataset:
 * - every page's HTML, requested one after the other with a signed-in session (p50, p99;
 *   target p99 <= 200 ms at 10 M reports);
 * - a market page with two years of daily data, rendered in headless Chromium: the time from
 *   navigation until every chart is drawn (the page's "charts-drawn" mark; target < 1 s).
 * Figures are reported, not asserted.
 */
import { existsSync } from "node:fs";
import { type Kysely, sql } from "kysely";
import { chromium } from "playwright-core";
import { Pool } from "undici";
import { addDays } from "../src/domain/dates.js";
import type { Tables } from "../src/store/tables.js";
import { orgKey } from "./data.js";
import { type DashboardResults, round } from "./results.js";
import { makerId, SCORECARD_COIN, SCORECARD_PROJECT, scorecardRange } from "./scorecards.js";
import { percentile, type RunningServer } from "./server.js";

const TARGET_P99_MS = 200;
const RENDER_TARGET_MS = 1000;
const RENDER_RUNS = 5;
const MAKER = makerId(0);
const MARKET = `/app/coins/${SCORECARD_COIN}/${MAKER}/markets/exchange-00/tether/spot`;

/**
 * The year before the scorecard dataset's for one market (bench-mm-00, coin-000 on
 * exchange-00/tether), so that its page can show two years of daily reports.
 */
export async function dashboardDataset(db: Kysely<Tables>, log: (s: string) => void) {
  const { first } = scorecardRange();
  await sql`
    insert into reports (organization_id, date, exchange_id, base_coin_id, quote_key,
      instrument_type, quote_coin_id, type, schema_version, bid_depth_tob, bid_depth_10,
      bid_depth_25, bid_depth_50, bid_depth_100, bid_depth_200, ask_depth_tob, ask_depth_10,
      ask_depth_25, ask_depth_50, ask_depth_100, ask_depth_200, bid_ask_depth_50,
      bid_ask_depth_100, bid_ask_depth_200, bid_ask_spread, top_of_book_percentage,
      order_fill_volume_maker, order_fill_volume_taker, order_fill_volume_maker_tob,
      eligibility_status, created_at, updated_at)
    select ${MAKER}, d::date, 'exchange-00', ${SCORECARD_COIN}, 'tether', 'spot', 'tether',
      'project', 2, 2000, 5000, 8000, 12000 + w, 30000 + w, 60000 + 2 * w, 2000, 5000, 8000,
      12000 + w, 30000 + w, 61000 + 2 * w, 24000, 60000, 121000, 0.4 + w / 100000, 55, 250000,
      90000, 40000, 'eligible', d + interval '32 hours', d + interval '32 hours'
    from generate_series(${addDays(first, -365)}::date, ${addDays(first, -1)}::date,
      interval '1 day') d, lateral (select round(5000 * sin(extract(doy from d) / 9.0)) as w) x
    on conflict do nothing`.execute(db);
  await sql`analyze reports`.execute(db);
  log("  dashboard dataset: a second year of one market");
}

/** The pages measured, each with the key whose session requests it. */
function dashboardPages(): Record<string, { path: string; key: string }> {
  const { first, last } = scorecardRange();
  const project = orgKey(SCORECARD_PROJECT);
  const maker = orgKey(MAKER);
  const year = `?dateGte=${first}&dateLte=${last}`;
  return {
    "coins (project)": { path: "/app/coins", key: project },
    "coin, 30 days (project)": { path: `/app/coins/${SCORECARD_COIN}`, key: project },
    "coin, 366 days (project)": { path: `/app/coins/${SCORECARD_COIN}${year}`, key: project },
    "market maker's markets, 30 days": {
      path: `/app/coins/${SCORECARD_COIN}/${MAKER}`,
      key: project,
    },
    "calendar, 90 days": { path: `/app/coins/${SCORECARD_COIN}/${MAKER}/calendar`, key: project },
    "calendar, 366 days": {
      path: `/app/coins/${SCORECARD_COIN}/${MAKER}/calendar${year}`,
      key: project,
    },
    "market, 90 days (market maker)": { path: MARKET, key: maker },
    "market, 2 years (market maker)": { path: twoYears(), key: maker },
    "markets (market maker)": { path: "/app/markets", key: maker },
  };
}

function twoYears(): string {
  const { last } = scorecardRange();
  return `${MARKET}?dateGte=${addDays(last, -730)}&dateLte=${last}`;
}

/** Signs in with `key` as a browser does; returns the session cookie ("name=value"). */
async function signIn(origin: string, key: string): Promise<string> {
  const response = await fetch(`${origin}/app/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin },
    body: new URLSearchParams({ key }).toString(),
  });
  const cookie = response.headers.get("set-cookie")?.split(";")[0];
  if (response.status !== 303 || cookie === undefined)
    throw new Error(`dashboard sign-in answered ${response.status}`);
  return cookie;
}

/** Each page `requests` times after 3 warm-ups, one at a time; then the Chromium render. */
export async function dashboardSuite(
  server: RunningServer,
  requests: number,
  log: (s: string) => void,
): Promise<DashboardResults> {
  const cookies = new Map<string, string>();
  const pool = new Pool(server.origin, { connections: 1 });
  const pages: DashboardResults["pages"] = {};
  try {
    for (const [name, { path, key }] of Object.entries(dashboardPages())) {
      const cookie = cookies.get(key) ?? (await signIn(server.origin, key));
      cookies.set(key, cookie);
      const latencies: number[] = [];
      let bytes = 0;
      let errors = 0;
      for (let i = 0; i < requests + 3; i++) {
        const t0 = performance.now();
        const res = await pool.request({ method: "GET", path, headers: { cookie } });
        const body = await res.body.text();
        if (i >= 3) latencies.push(performance.now() - t0);
        if (res.statusCode !== 200) errors++;
        bytes = body.length;
      }
      const p99Ms = round(percentile(latencies, 99));
      pages[name] = {
        p50Ms: round(percentile(latencies, 50)),
        p99Ms,
        requests: latencies.length,
        kilobytes: Math.round(bytes / 1024),
        targetP99Ms: TARGET_P99_MS,
        errors,
      };
      log(
        `  dashboard ${name}: p50 ${pages[name].p50Ms} ms, p99 ${p99Ms} ms, ${pages[name].kilobytes} KB`,
      );
    }
  } finally {
    await pool.close();
  }
  const render = await renderInChromium(server.origin, await signIn(server.origin, orgKey(MAKER)));
  log(`  dashboard render, market page of two years: ${JSON.stringify(render)}`);
  return { pages, render };
}

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Navigation to "charts-drawn" of the two-year market page, in ms, after one warm-up. */
async function renderInChromium(
  origin: string,
  cookie: string,
): Promise<DashboardResults["render"]> {
  if (!existsSync(CHROMIUM)) return { skipped: `no Chromium at ${CHROMIUM}` };
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  try {
    const [name, value = ""] = cookie.split("=");
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addCookies([{ name: name ?? "", value, url: origin }]);
    const times: number[] = [];
    let points = 0;
    for (let run = 0; run <= RENDER_RUNS; run++) {
      const page = await context.newPage();
      await page.goto(`${origin}${twoYears()}`);
      // A selector: a string predicate would be evaluated in the page, which its CSP refuses.
      await page.locator("html[data-charts-drawn='true']").waitFor({ state: "attached" });
      // A string: it runs in the page, where the DOM is (not in this program's types).
      const drawn = (await page.evaluate(`({
        ms: performance.getEntriesByName("charts-drawn")[0]?.startTime ?? NaN,
        points: Number(document.querySelector("figure.chart")?.dataset.drawnPoints),
      })`)) as { ms: number; points: number };
      if (run > 0) times.push(drawn.ms);
      points = drawn.points;
      await page.close();
    }
    return {
      runs: times.length,
      points,
      medianMs: round(percentile(times, 50)),
      maxMs: round(Math.max(...times)),
      targetMs: RENDER_TARGET_MS,
    };
  } finally {
    await browser.close();
  }
}

/** The Markdown of the dashboard's figures at one table size. */
export function dashboardLines(target: string, size: string, d: DashboardResults): string[] {
  const lines = [
    `### ${target}: dashboard pages at ${Number(size).toLocaleString("en")} records`,
    "",
    "| page | p50 ms | p99 ms | KB | p99 target ms |",
    "|---|---:|---:|---:|---:|",
  ];
  for (const [name, p] of Object.entries(d.pages)) {
    const met = p.p99Ms <= p.targetP99Ms ? "(met)" : "(missed)";
    lines.push(`| ${name} | ${p.p50Ms} | ${p.p99Ms} | ${p.kilobytes} | ${p.targetP99Ms} ${met} |`);
  }
  const r = d.render;
  lines.push(
    "",
    "skipped" in r
      ? `Market page of two years in Chromium: skipped (${r.skipped})`
      : `Market page of two years (${r.points} days) in Chromium, navigation to charts drawn: median ${r.medianMs} ms, max ${r.maxMs} ms over ${r.runs} runs (target < ${r.targetMs} ms: ${r.maxMs < r.targetMs ? "met" : "missed"})`,
    "",
  );
  return lines;
}
