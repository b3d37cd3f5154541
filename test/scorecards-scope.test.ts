import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import type { ReadScope } from "../src/domain/caller.js";
import { KPI_NAMES } from "../src/domain/obligation.js";
import { periodSummary } from "../src/store/scorecard-aggregate-sql.js";
import { judgedWith } from "../src/store/scorecard-store.js";
import { SCORECARD_KEYS as KEYS, scorecardWorld, type World } from "./helpers/scorecard-world.js";

/** Who sees which scorecards (CONTRACT section 4), and the query's 400s. */
let w: World;
beforeAll(async () => {
  w = await scorecardWorld();
  w.setClock(new Date("2025-03-10T00:00:00Z"));
});
afterAll(async () => w?.t.close());

const RANGE = "dateGte=2025-03-01&dateLte=2025-03-05";
type Item = { organizationId: string; baseCoinId: string; date?: string };

async function items(key: string, path = "/api/v1/scorecards", query = ""): Promise<Item[]> {
  const response = await w.t.request({ method: "GET", url: `${path}?${RANGE}${query}`, key });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().items;
}

const owners = (list: Item[]) => [
  ...new Set(list.map((i) => `${i.organizationId}/${i.baseCoinId}`)),
];

describe("scorecard scope", () => {
  for (const path of ["/api/v1/scorecards", "/api/v1/scorecards/daily"]) {
    it(`${path}: a market maker sees only its own obligations`, async () => {
      expect(owners(await items(KEYS.acme, path))).toEqual(["acme/chainlink", "acme/uniswap"]);
      expect(owners(await items(KEYS.globex, path))).toEqual(["globex/chainlink"]);
      // Another organization's id as a filter narrows the caller's own scope to nothing.
      expect(await items(KEYS.globex, path, "&organizationId=acme")).toEqual([]);
    });

    it(`${path}: a project sees every market maker's obligations for its coins only`, async () => {
      expect(owners(await items(KEYS.project, path))).toEqual([
        "acme/chainlink",
        "globex/chainlink",
      ]);
      expect(await items(KEYS.project, path, "&baseCoinId=uniswap")).toEqual([]);
    });

    it(`${path}: the operator sees everything`, async () => {
      expect(owners(await items(KEYS.operator, path))).toEqual([
        "acme/chainlink",
        "acme/uniswap",
        "globex/chainlink",
      ]);
    });
  }

  it("a project with no coins sees nothing", async () => {
    await w.t.database.db
      .deleteFrom("organization_coins")
      .where("organization_id", "=", "chainlink-foundation")
      .execute();
    expect(await items(KEYS.project)).toEqual([]);
    await w.t.database.db
      .insertInto("organization_coins")
      .values({ organization_id: "chainlink-foundation", base_coin_id: "chainlink" })
      .execute();
  });

  it("needs an API key", async () => {
    const response = await w.t.request({ method: "GET", url: "/api/v1/scorecards" });
    expect(response.statusCode).toBe(401);
  });
});

describe("scorecard query errors (400, the parameter as path)", () => {
  const cases: [string, string, string][] = [
    ["dateGte=2025-02-30", "dateGte", "Invalid date, expected YYYY-MM-DD"],
    ["dateLte=yesterday", "dateLte", "Invalid date, expected YYYY-MM-DD"],
    ["dateGte=1999-12-31&dateLte=2000-01-05", "dateGte", "Date must not be before 2000-01-01"],
    [
      "dateGte=2025-03-05&dateLte=2025-03-01",
      "dateLte",
      "dateGte (2025-03-05) is after dateLte (2025-03-01)",
    ],
    [
      "dateGte=2024-02-29&dateLte=2025-03-01",
      "dateLte",
      "The range from dateGte to dateLte must not exceed 366 days",
    ],
    ["dateGte=2020-01-01", "dateGte", "The range from dateGte to dateLte must not exceed 366 days"],
    [
      "dateLte=2025-03-01&dateGte=2025-03-02",
      "dateLte",
      "dateGte (2025-03-02) is after dateLte (2025-03-01)",
    ],
    ["baseCoinId=", "baseCoinId", "String must contain at least 1 character(s)"],
  ];
  for (const path of ["/api/v1/scorecards", "/api/v1/scorecards/daily"]) {
    for (const [query, param, message] of cases) {
      it(`${path}?${query}`, async () => {
        const response = await w.t.request({
          method: "GET",
          url: `${path}?${query}`,
          key: KEYS.operator,
        });
        expect(response.statusCode).toBe(400);
        expect(response.json()).toEqual({
          statusCode: 400,
          error: "Bad Request",
          message: [{ path: param, message }],
        });
      });
    }
  }

  it("accepts exactly 366 days", async () => {
    const response = await w.t.request({
      method: "GET",
      url: "/api/v1/scorecards?dateGte=2024-03-01&dateLte=2025-03-01",
      key: KEYS.operator,
    });
    expect(response.statusCode).toBe(200);
  });

  it("starts the default range no earlier than 2000-01-01", async () => {
    const response = await w.t.request({
      method: "GET",
      url: "/api/v1/scorecards?dateLte=2000-01-10",
      key: KEYS.operator,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ dateGte: "2000-01-01", dateLte: "2000-01-10" });
  });
});

describe("REPORT_DEADLINE_UTC", () => {
  it("defaults to 12:00", () => {
    expect(loadConfig({}).reportDeadlineUtc).toBe("12:00");
  });

  it("is refused unless HH:MM from 00:00 to 23:59", () => {
    for (const bad of ["24:00", "12", "7:30", "12:60", "noon"]) {
      expect(() => loadConfig({ REPORT_DEADLINE_UTC: bad })).toThrow(
        "invalid environment: REPORT_DEADLINE_UTC: must be a time of day HH:MM, 00:00 to 23:59 (UTC)",
      );
    }
    expect(loadConfig({ REPORT_DEADLINE_UTC: "09:30" }).reportDeadlineUtc).toBe("09:30");
  });

  it("moves the deadline: at 09:30 a report sent at 10:00 the next day is late", async () => {
    const other = await scorecardWorld({ REPORT_DEADLINE_UTC: "09:30" });
    try {
      other.setClock(new Date("2025-03-10T00:00:00Z"));
      const response = await other.t.request({
        method: "GET",
        url: `/api/v1/scorecards?${RANGE}&organizationId=acme&baseCoinId=chainlink`,
        key: KEYS.acme,
      });
      // Every acme report of the world was sent at 08:00 the next day (on time), but GBP's
      // day 2 (13:00) and day 4 (12:00): late with a 09:30 deadline.
      const gbp = response.json().items.find((i: { quote: string }) => i.quote === "GBP");
      expect(gbp.daysLate).toBe(2);
    } finally {
      await other.t.close();
    }
  });
});

describe("the scorecard routes in the OpenAPI document", () => {
  it("have an operationId, summary, description, tag, described parameters and examples", async () => {
    const document = (await w.t.app.inject({ url: "/openapi.json" })).json();
    for (const [path, operationId] of [
      ["/api/v1/scorecards", "getScorecards"],
      ["/api/v1/scorecards/daily", "getDailyScorecards"],
    ]) {
      const get = document.paths[path as string].get;
      expect(get.operationId).toBe(operationId);
      expect(get.summary).toBeTruthy();
      expect(get.description).toMatch(/REPORT_DEADLINE_UTC/);
      expect(get.tags).toEqual(["scorecards"]);
      expect(get.parameters.map((p: { name: string }) => p.name)).toEqual([
        "baseCoinId",
        "organizationId",
        "dateGte",
        "dateLte",
      ]);
      for (const parameter of get.parameters) expect(parameter.description).toBeTruthy();
      for (const status of ["200", "400"])
        expect(get.responses[status].content["application/json"].example).toBeDefined();
      expect(get.responses["401"].$ref).toBe("#/components/responses/Unauthorized");
    }
  });
});

describe("a scorecard judged with a stale KPI mask", () => {
  it("is judged again with the KPIs its own periods set", async () => {
    const db = w.t.database.db;
    const filter = {
      scope: { kind: "all" } as const,
      dateGte: "2025-03-01",
      dateLte: "2025-03-05",
      now: new Date("2025-03-10T00:00:00Z"),
      deadlineUtc: loadConfig({}).reportDeadlineUtc,
    };
    const parts = { medians: true, shares: true };
    const summary = (await periodSummary(filter).execute(db)).rows[0];
    expect(summary?.kpi_mask).toBeGreaterThan(0);
    // As if the summary had been read before every obligation set its KPIs.
    const stale = await judgedWith(db, filter, parts, 0);
    expect(stale).toEqual(await judgedWith(db, filter, parts, summary?.kpi_mask ?? 0));
    const met = `met_${KPI_NAMES.indexOf("minBidDepth200")}` as const;
    expect(stale.some((row) => Number(row[met]) > 0)).toBe(true);
  });
});

describe("the dashboard's scorecard read, split over connections", () => {
  // The test stores split every scope (parallelism 4, no threshold): the shares come from the
  // period summary, so it must hold the caller's scope and filters, never more.
  const read = (scope: ReadScope, extra: { baseCoinId?: string; organizationId?: string } = {}) =>
    w.t.database.stores.scorecards.marketsWithMedians(
      {
        scope,
        ...extra,
        dateGte: "2025-03-01",
        dateLte: "2025-03-05",
        now: new Date("2025-03-10T00:00:00Z"),
        deadlineUtc: loadConfig({}).reportDeadlineUtc,
      },
      true,
    );
  const ownersOf = async (scope: ReadScope, extra = {}) => {
    const { markets, medians } = await read(scope, extra);
    return [...new Set([...markets, ...medians].map((m) => `${m.organizationId}/${m.baseCoinId}`))];
  };

  it("a market maker reads only itself, whatever organization it asks for", async () => {
    const globex = { kind: "organization", organizationId: "globex" } as const;
    expect(await ownersOf(globex)).toEqual(["globex/chainlink"]);
    expect(await ownersOf(globex, { organizationId: "acme" })).toEqual([]);
  });

  it("a project reads only its coins, whatever coin it asks for", async () => {
    const project = { kind: "coins", baseCoinIds: ["chainlink"] } as const;
    expect(await ownersOf(project)).toEqual(["acme/chainlink", "globex/chainlink"]);
    expect(await ownersOf(project, { baseCoinId: "uniswap" })).toEqual([]);
  });
});
