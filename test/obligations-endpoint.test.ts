import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Fixture } from "../src/schemas/fixture.js";
import { accountabilityFixture, READER_KEYS } from "./helpers/accountability.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS } from "./helpers/fixture.js";

/**
 * GET /api/v1/obligations answers for the caller's scope only (CONTRACT section 4): a market
 * maker its own periods, a project every market maker's for its coins, the operator all.
 */
const PROJECT_KEY = READER_KEYS.chainlinkLabs;
const OPERATOR_KEY = READER_KEYS.operator;

const market = (exchangeId: string, quote: string, instrumentType: "spot" | "perp" = "spot") => ({
  exchangeId,
  quote,
  instrumentType,
});

function fixture(): Fixture {
  const f = accountabilityFixture();
  const [acme, globex] = f.organizations;
  if (acme === undefined || globex === undefined) throw new Error("fixture changed");
  const [chainlink, uniswap] = acme.engagements;
  if (chainlink === undefined || uniswap === undefined) throw new Error("fixture changed");
  chainlink.obligations = [
    {
      since: "2025-01-01",
      until: "2025-06-30",
      markets: [market("binance", "tether"), market("kraken", "USD")],
      kpis: { minBidDepth200: 5000, maxBidAskSpread: 1 },
    },
    {
      since: "2025-07-01",
      markets: [market("binance_futures", "tether", "perp")],
      kpis: { minTopOfBookPercentage: 40 },
    },
  ];
  uniswap.obligations = [
    { since: "2025-01-01", markets: [market("binance", "tether")], kpis: { minAskDepth50: 100 } },
  ];
  const [globexLink] = globex.engagements;
  if (globexLink === undefined) throw new Error("fixture changed");
  globexLink.obligations = [
    { since: "2025-03-01", markets: [market("binance", "tether")], kpis: { minBidDepthTob: 10 } },
  ];
  return f;
}

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ fixture: fixture() });
});
afterAll(async () => t?.close());

type Item = { organizationId: string; baseCoinId: string; since: string };
const list = async (key: string, query = "") => {
  const response = await t.request({ method: "GET", url: `/api/v1/obligations${query}`, key });
  expect(response.statusCode).toBe(200);
  return (response.json() as { items: Item[] }).items.map(
    (i) => `${i.organizationId} ${i.baseCoinId} ${i.since}`,
  );
};

describe("GET /api/v1/obligations", () => {
  it("gives a market maker its own periods, whole, in order", async () => {
    const response = await t.request({ method: "GET", url: "/api/v1/obligations", key: KEYS.acme });
    expect(response.json().items[0]).toEqual({
      organizationId: "acme",
      organizationName: "Acme Market Making",
      baseCoinId: "chainlink",
      since: "2025-01-01",
      until: "2025-06-30",
      markets: [market("binance", "tether"), market("kraken", "USD")],
      kpis: { minBidDepth200: 5000, maxBidAskSpread: 1 },
    });
    expect(await list(KEYS.acme)).toEqual([
      "acme chainlink 2025-01-01",
      "acme chainlink 2025-07-01",
      "acme uniswap 2025-01-01",
    ]);
    expect(await list(KEYS.acme, "?baseCoinId=uniswap")).toEqual(["acme uniswap 2025-01-01"]);
  });

  it("never shows a market maker another's periods, whatever it filters on", async () => {
    expect(await list(KEYS.globex)).toEqual(["globex chainlink 2025-03-01"]);
    expect(await list(KEYS.globex, "?organizationId=acme")).toEqual([]);
    expect(await list(KEYS.acme, "?organizationId=globex&baseCoinId=chainlink")).toEqual([]);
  });

  it("shows a project every market maker's periods for its coins only", async () => {
    expect(await list(PROJECT_KEY)).toEqual([
      "acme chainlink 2025-01-01",
      "acme chainlink 2025-07-01",
      "globex chainlink 2025-03-01",
    ]);
    expect(await list(PROJECT_KEY, "?organizationId=globex")).toEqual([
      "globex chainlink 2025-03-01",
    ]);
    expect(await list(PROJECT_KEY, "?baseCoinId=uniswap")).toEqual([]);
  });

  it("shows the operator everything, filtered as asked", async () => {
    expect(await list(OPERATOR_KEY)).toEqual([
      "acme chainlink 2025-01-01",
      "acme chainlink 2025-07-01",
      "acme uniswap 2025-01-01",
      "globex chainlink 2025-03-01",
    ]);
    expect(await list(OPERATOR_KEY, "?organizationId=acme&baseCoinId=uniswap")).toEqual([
      "acme uniswap 2025-01-01",
    ]);
  });

  it("answers a bad query with a 400 naming the parameter, and no key with a 401", async () => {
    const bad = await t.request({
      method: "GET",
      url: `/api/v1/obligations?baseCoinId=${"x".repeat(201)}`,
      key: KEYS.acme,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({
      statusCode: 400,
      error: "Bad Request",
      message: [{ path: "baseCoinId", message: expect.any(String) }],
    });
    const empty = await t.request({
      method: "GET",
      url: "/api/v1/obligations?organizationId=",
      key: KEYS.acme,
    });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().message[0].path).toBe("organizationId");
    const anonymous = await t.request({ method: "GET", url: "/api/v1/obligations" });
    expect(anonymous.statusCode).toBe(401);
  });

  it("is documented: operationId, tags and the response schema", async () => {
    const doc = (await t.request({ method: "GET", url: "/openapi.json" })).json();
    const operation = doc.paths["/api/v1/obligations"].get;
    expect(operation.operationId).toBe("listObligations");
    expect(operation.tags).toEqual(["obligations"]);
    expect(operation.parameters.map((p: { name: string }) => p.name).sort()).toEqual([
      "baseCoinId",
      "organizationId",
    ]);
  });
});
