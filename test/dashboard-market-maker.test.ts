import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InjectedSession, injectSignIn } from "./helpers/dashboard.js";
import { tableRows } from "./helpers/html-table.js";
import { SCORECARD_KEYS, scorecardWorld, type World } from "./helpers/scorecard-world.js";

let world: World;
let acme: InjectedSession;
beforeAll(async () => {
  world = await scorecardWorld();
  // Yesterday is 2025-03-03, its deadline passed an hour ago.
  world.setClock(new Date("2025-03-04T13:00:00Z"));
  acme = await injectSignIn(world.t, SCORECARD_KEYS.acme);
});
afterAll(async () => world?.t.close());

describe("the market maker's overview", () => {
  it("shows yesterday's coverage of every obligation market (one missing)", async () => {
    const page = await acme.get("/app/overview");
    expect(page.statusCode).toBe(200);
    expect(tableRows(page.body, "Obligation markets on 2025-03-03")).toEqual([
      "chainlink | binance | EUR | spot | Missing | — | — | —",
      "chainlink | binance | GBP | spot | Submitted | On time | Met | Ineligible",
      "chainlink | binance | JPY | spot | Submitted | On time | Met | Ineligible",
      "chainlink | binance | tether | spot | Submitted | On time | Met | Eligible",
      "chainlink | binance | usd-coin | spot | Submitted | On time | Missed: minTopOfBookPercentage | Ineligible",
      "chainlink | binance_futures | tether | perp | Submitted | On time | Met | Eligible",
      "chainlink | kraken | USD | spot | Submitted | On time | Met | Eligible",
      "uniswap | binance | tether | spot | Submitted | On time | Met | Eligible",
    ]);
    expect(page.body).toMatch(/<span class="figure">8<\/span> Obligation markets/);
    expect(page.body).toMatch(/<span class="figure">7<\/span> Submitted/);
    expect(page.body).toMatch(/<span class="figure">1<\/span> Missing/);
    expect(page.body).toMatch(/<span class="figure">0<\/span> Late/);
  });

  it("breaks the day's reports down by eligibility reason", async () => {
    const page = await acme.get("/app/overview");
    expect(tableRows(page.body, "Eligibility of the 7 reports dated 2025-03-03")).toEqual([
      "eligible | 4 | Matched with market data",
      "exchange_market_data_missing | 0 | No market data is collected for the exchange",
      "base_not_traded | 0 | The base coin is not traded on the exchange (for this instrument type)",
      "pair_not_found | 3 | The pair (base and quote) does not exist on the exchange",
      "before_collection_start | 0 | The report's date is before market data collection began for the pair",
    ]);
  });

  it("shows another day on request: a late report", async () => {
    const page = await acme.get("/app/overview?date=2025-03-02");
    const markets = tableRows(page.body, "Obligation markets on 2025-03-02");
    expect(markets[1]).toBe(
      "chainlink | binance | GBP | spot | Submitted | Late | Met | Ineligible",
    );
    expect(markets[6]).toBe(
      "chainlink | kraken | USD | spot | Submitted | On time | Missed: minBidDepth200 | Eligible",
    );
    expect(page.body).toMatch(/<span class="figure">1<\/span> Late/);
  });

  it("answers a bad day with a 400 page naming the problem", async () => {
    const page = await acme.get("/app/overview?date=2025-02-30");
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain("Invalid date, expected YYYY-MM-DD");
  });
});

describe("the reports page", () => {
  it("lists the listing's page with its filters and paging", async () => {
    const api = (
      await world.t.request({
        url: "/api/v1/reports?baseCoinId=uniswap&pageSize=2",
        key: SCORECARD_KEYS.acme,
      })
    ).json();
    const page = await acme.get("/app/reports?baseCoinId=uniswap&pageSize=25&exchangeId=");
    expect(page.statusCode).toBe(200);
    const listed = tableRows(page.body, `Reports (${api.totalCount} matching)`);
    expect(listed).toHaveLength(5);
    expect(listed[0]).toBe(
      "2025-03-05 | Binance | UNI | tether | 6,000 | 6,100 | 0.25 | 42.5 | eligible | None",
    );
    const paged = await acme.get("/app/reports?baseCoinId=uniswap&pageSize=2&page=3");
    expect(tableRows(paged.body, "Reports (5 matching)")).toEqual([
      "2025-03-01 | Binance | UNI | tether | 6,000 | 6,100 | 0.25 | 42.5 | eligible | None",
    ]);
    expect(paged.body).toContain("Page 3 of 3");
    expect(paged.body).toContain(
      'href="/app/reports?baseCoinId=uniswap&amp;page=2&amp;pageSize=2"',
    );
  });

  it("says why the table is empty: a page past the end (linking to the last), dates the wrong way round", async () => {
    const past = await acme.get("/app/reports?baseCoinId=uniswap&pageSize=2&page=9");
    expect(past.body).toContain("Page 9 is past the last page (3) of the 5 matching reports.");
    expect(past.body).toContain(
      '<a rel="prev" href="/app/reports?baseCoinId=uniswap&amp;page=3&amp;pageSize=2">Last page</a>',
    );
    const reversed = await acme.get("/app/reports?dateGte=2025-03-05&dateLte=2025-03-01");
    expect(reversed.statusCode).toBe(200);
    expect(reversed.body).toContain(
      "No report can match: From (2025-03-05) is after To (2025-03-01).",
    );
    const none = await acme.get("/app/reports?baseCoinId=uniswap&dateLte=2020-01-01");
    expect(none.body).toContain("No report matches these filters.");
  });

  it("says in words why a report is ineligible, beside its code", async () => {
    const page = await acme.get("/app/reports?pageSize=500");
    expect(page.body).toContain(
      '<abbr title="The pair (base and quote) does not exist on the exchange">pair_not_found</abbr>',
    );
    expect(page.body).toContain(
      "<dt>pair_not_found</dt><dd>The pair (base and quote) does not exist on the exchange</dd>",
    );
  });

  it("downloads the CSV of every matching report, as the API exports it", async () => {
    const csv = await acme.get("/app/reports.csv?baseCoinId=uniswap&dateGte=2025-03-02");
    const api = await world.t.request({
      url: "/api/v1/reports?baseCoinId=uniswap&dateGte=2025-03-02",
      key: SCORECARD_KEYS.acme,
      headers: { accept: "text/csv" },
    });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers["content-disposition"]).toBe('attachment; filename="reports.csv"');
    expect(csv.body).toBe(api.body);
    expect(csv.body.trim().split("\r\n")).toHaveLength(1 + 4);
  });

  it("reads include as the API does: quality adds the column, any other value is ignored", async () => {
    const base = "baseCoinId=uniswap&dateGte=2025-03-02";
    for (const include of ["quality", "foo,quality", "foo", "QUALITY"]) {
      const csv = await acme.get(`/app/reports.csv?${base}&include=${include}`);
      const api = await world.t.request({
        url: `/api/v1/reports?${base}&include=${include}`,
        key: SCORECARD_KEYS.acme,
        headers: { accept: "text/csv" },
      });
      expect(csv.statusCode, include).toBe(200);
      expect(csv.body, include).toBe(api.body);
      expect(csv.body.split("\r\n")[0]?.endsWith(",qualityFlags"), include).toBe(
        include.includes("quality"),
      );
    }
    expect((await acme.get(`/app/reports?${base}&include=foo`)).statusCode).toBe(200);
  });

  it("keeps include=quality when the filters are applied, as the pager and the CSV link do", async () => {
    const hidden = '<input type="hidden" name="include" value="quality">';
    const filters = (body: string) =>
      /<form[^>]*aria-label="Filters">[\s\S]*?<\/form>/.exec(body)?.[0];
    const quality = await acme.get("/app/reports?baseCoinId=uniswap&include=quality");
    expect(filters(quality.body)).toContain(hidden);
    expect(quality.body).toContain(
      'href="/app/reports.csv?baseCoinId=uniswap&amp;include=quality"',
    );
    const plain = await acme.get("/app/reports?baseCoinId=uniswap");
    expect(filters(plain.body)).not.toContain('name="include"');
  });

  it("answers a bad filter with the API's 400 problem", async () => {
    const page = await acme.get("/app/reports?pageSize=501");
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain("pageSize: Expected an integer from 1 to 500");
  });
});

describe("access by caller kind", () => {
  it("keeps the overview from project and operator keys (403)", async () => {
    for (const key of [SCORECARD_KEYS.project, SCORECARD_KEYS.operator]) {
      const session = await injectSignIn(world.t, key);
      expect((await session.get("/app/overview")).statusCode).toBe(403);
    }
  });

  it("sends a signed-out visitor of a page to the sign-in form", async () => {
    const page = await world.t.request({ url: "/app/overview" });
    expect(page.statusCode).toBe(303);
    expect(page.headers.location).toBe("/app");
  });
});
