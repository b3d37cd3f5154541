import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Fixture } from "../src/schemas/fixture.js";
import { accountabilityFixture, READER_KEYS } from "./helpers/accountability.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { baseFixture, KEYS, v2Record } from "./helpers/fixture.js";
import { listAll, listPage, submitAll } from "./helpers/reports.js";

/**
 * CONTRACT section 4: a project key reads every market maker's reports for its coins, dated
 * inside an engagement of that market maker for the coin; the operator reads every report; a
 * market maker's listing is unchanged.
 */
const INITECH_KEY = "initech-key-0123456789abcdef0123456789";

function withInitech(fixture: Fixture): Fixture {
  fixture.organizations.push({
    id: "initech",
    name: "Initech",
    apiKeys: [INITECH_KEY],
    // Two periods with a gap: a report of the gap (2024-04-05) is in no project's scope.
    engagements: [
      { baseCoinId: "chainlink", type: "prop", since: "2024-03-01", until: "2024-03-31" },
      { baseCoinId: "chainlink", type: "prop", since: "2024-04-10", until: null },
    ],
  });
  return fixture;
}

const kraken = { exchangeId: "kraken", quoteCoinId: undefined, quoteCoinSymbol: "usd" };
const submissions: [string, Record<string, unknown>[]][] = [
  [
    KEYS.acme,
    [
      v2Record({ date: "2024-05-01" }),
      v2Record({ date: "2024-05-01", baseCoinId: "uniswap" }),
      v2Record({ date: "2024-06-01", baseCoinId: "aave", exchangeId: "nodata" }),
      v2Record({ date: "2025-02-01", baseCoinId: "aave", exchangeId: "nodata" }),
    ],
  ],
  [KEYS.globex, [v2Record({ date: "2024-05-01" }), v2Record({ date: "2024-05-01", ...kraken })]],
  [
    INITECH_KEY,
    [
      v2Record({ date: "2024-03-10" }),
      v2Record({ date: "2024-04-05" }),
      v2Record({ date: "2024-04-12" }),
    ],
  ],
];

async function startWith(fixture: Fixture): Promise<TestApp> {
  const app = await startTestApp({ fixture: withInitech(fixture) });
  for (const [key, records] of submissions) await submitAll(app, key, records);
  return app;
}

let t: TestApp;
beforeAll(async () => {
  t = await startWith(accountabilityFixture());
});
afterAll(async () => t?.close());

type Item = Record<string, unknown>;
const keyOf = (i: Item) => [i.date, i.exchangeId, i.baseCoinId, i.organizationId].join(" ");

describe("a project key's listing", () => {
  it("holds its coins' reports of every market maker, dated inside their engagements", async () => {
    const items = (await listAll(t, READER_KEYS.chainlinkLabs)) as unknown as Item[];
    expect(items.map(keyOf)).toEqual([
      "2024-05-01 binance chainlink acme",
      "2024-05-01 binance chainlink globex",
      "2024-05-01 kraken chainlink globex",
      "2024-04-12 binance chainlink initech",
      "2024-03-10 binance chainlink initech",
    ]);
    expect(Object.keys(items[0] ?? {}).slice(0, 3)).toEqual([
      "organizationId",
      "organizationName",
      "date",
    ]);
    expect(items[0]).toMatchObject({ organizationName: "Acme Market Making", bidDepth50: 4000 });
  });

  it("never shows another coin's reports, nor dates outside the engagement", async () => {
    const uniswap = (await listAll(t, READER_KEYS.uniswapLabs)) as unknown as Item[];
    expect(uniswap.map(keyOf)).toEqual(["2024-05-01 binance uniswap acme"]);
    const other = await listPage(t, READER_KEYS.uniswapLabs, { baseCoinId: "chainlink" });
    expect(other).toEqual({ page: 1, totalPages: 0, totalCount: 0, items: [] });
    const april = await listPage(t, READER_KEYS.chainlinkLabs, { organizationId: "initech" });
    expect((april.items as unknown as Item[]).map((i) => i.date)).toEqual([
      "2024-04-12",
      "2024-03-10",
    ]);
  });

  it("filters by organizationId; an unknown or unstorable one lists nothing", async () => {
    const globex = await listPage(t, READER_KEYS.chainlinkLabs, { organizationId: "globex" });
    expect(globex.totalCount).toBe(2);
    expect(new Set(globex.items.map((i) => (i as unknown as Item).organizationId))).toEqual(
      new Set(["globex"]),
    );
    for (const organizationId of ["nobody", "nul\u0000", "x".repeat(300)]) {
      const page = await listPage(t, READER_KEYS.chainlinkLabs, { organizationId });
      expect(page).toEqual({ page: 1, totalPages: 0, totalCount: 0, items: [] });
    }
  });

  it("counts and pages exactly", async () => {
    const first = await listPage(t, READER_KEYS.chainlinkLabs, { pageSize: 3 });
    expect([first.totalCount, first.totalPages, first.items.length]).toEqual([5, 2, 3]);
    expect(await listAll(t, READER_KEYS.chainlinkLabs, { pageSize: 1 })).toHaveLength(5);
  });
});

describe("an operator key's listing", () => {
  it("holds every report of every organization, organizationId after baseCoinId", async () => {
    const items = (await listAll(t, READER_KEYS.operator, { pageSize: 2 })) as unknown as Item[];
    expect(items.map(keyOf)).toEqual([
      "2025-02-01 nodata aave acme",
      "2024-06-01 nodata aave acme",
      "2024-05-01 binance chainlink acme",
      "2024-05-01 binance chainlink globex",
      "2024-05-01 binance uniswap acme",
      "2024-05-01 kraken chainlink globex",
      "2024-04-12 binance chainlink initech",
      "2024-04-05 binance chainlink initech",
      "2024-03-10 binance chainlink initech",
    ]);
    const dated = await listPage(t, READER_KEYS.operator, {
      organizationId: "acme",
      exchangeId: "nodata",
      dateLte: "2024-12-31",
    });
    expect(dated.items.map((i) => i.date)).toEqual(["2024-06-01"]);
  });

  it("exports CSV with organizationId and organizationName first, every report or one page", async () => {
    const all = await t.request({
      method: "GET",
      url: "/api/v1/reports",
      key: READER_KEYS.operator,
      headers: { accept: "text/csv" },
    });
    expect(all.statusCode).toBe(200);
    const lines = all.body.trimEnd().split("\r\n");
    expect(lines[0]?.startsWith("organizationId,organizationName,date,exchangeId,")).toBe(true);
    expect(lines).toHaveLength(10);
    expect(lines[1]?.startsWith("acme,Acme Market Making,2025-02-01,nodata,")).toBe(true);
    const page = await t.request({
      method: "GET",
      url: "/api/v1/reports?page=2&pageSize=1&organizationId=globex",
      key: READER_KEYS.chainlinkLabs,
      headers: { accept: "text/csv" },
    });
    expect(page.body.trimEnd().split("\r\n").slice(1)).toEqual([
      expect.stringMatching(/^globex,Globex Liquidity,2024-05-01,kraken,/),
    ]);
  });
});

describe("a market maker key's listing", () => {
  it("is byte-identical to one without readers, and ignores organizationId", async () => {
    const plain = await startWith(baseFixture());
    try {
      for (const [key, query] of [
        [KEYS.acme, ""],
        [KEYS.acme, "?pageSize=1&page=2"],
        [KEYS.globex, ""],
        [INITECH_KEY, ""],
      ] as const) {
        for (const accept of ["application/json", "text/csv"]) {
          const request = { method: "GET" as const, url: `/api/v1/reports${query}`, key };
          const expected = await plain.request({ ...request, headers: { accept } });
          const actual = await t.request({ ...request, headers: { accept } });
          const filtered = await t.request({
            ...request,
            url: `${request.url}${query ? "&" : "?"}organizationId=globex`,
            headers: { accept },
          });
          // Repeated or empty, as any unknown parameter would be.
          const repeated = await t.request({
            ...request,
            url: `${request.url}${query ? "&" : "?"}organizationId=globex&organizationId=&organizationId=x`,
            headers: { accept },
          });
          expect(actual.body).toBe(expected.body);
          expect(filtered.body).toBe(expected.body);
          expect(repeated.statusCode).toBe(200);
          expect(repeated.body).toBe(expected.body);
        }
      }
      const acme = await listPage(t, KEYS.acme);
      expect(acme.items.map((i) => `${i.date} ${i.baseCoinId}`)).toEqual([
        "2024-05-01 chainlink",
        "2024-05-01 uniswap",
      ]);
      expect(JSON.stringify(acme)).not.toContain("organization");
    } finally {
      await plain.close();
    }
  });
});
