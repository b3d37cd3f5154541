import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InjectedSession, injectSignIn } from "../helpers/dashboard.js";
import { expectSpecifiedShape, oddStrings } from "../helpers/fuzz.js";
import { MARKETS, SCORECARD_KEYS, scorecardWorld, type World } from "../helpers/scorecard-world.js";

/**
 * Every documented operation but the report submissions (api.fuzz.test.ts) and every dashboard
 * page, called by each kind of caller with made-up path parameters, query strings and bodies,
 * over a world with reports, obligations and scorecards: a 2xx, or a 4xx in the specified
 * shape (and as documented: the test app checks every answer against the OpenAPI document).
 */

/** Bounded in CI; `npm run fuzz` sets FUZZ_RUNS much higher. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);

type Operation = {
  method: string;
  path: string;
  query: string[];
  enums: string[];
  bodyFields: string[] | undefined;
};

// A public address literal: no DNS needed, and nothing is ever sent (no delivery job here).
const PUBLIC_URL = "https://93.184.215.14/hooks/trading-reports";
const CALLERS = [SCORECARD_KEYS.acme, SCORECARD_KEYS.project, SCORECARD_KEYS.operator];

let world: World;
let operations: Operation[];
/** Ids that exist: each caller's webhook and its test delivery, acme's submissions. */
const ids: string[] = [];
/** Each caller's webhook id and its delivery's id: the path values that find something. */
const owned = new Map<string, string[]>();
beforeAll(async () => {
  world = await scorecardWorld({
    RATE_LIMIT_PER_MINUTE: "1000000",
    RATE_LIMIT_PER_ADDRESS_PER_MINUTE: "1000000",
    AUTH_FAILURES_PER_MINUTE: "1000000",
  });
  const { t } = world;
  operations = documentedOperations((await t.request({ url: "/openapi.json" })).json()).filter(
    (o) => !o.path.endsWith("/report"),
  );
  for (const key of CALLERS) {
    const payload = { url: PUBLIC_URL, events: ["*"] };
    const { id } = (
      await t.request({ method: "POST", url: "/api/v1/webhooks", key, payload })
    ).json();
    await t.request({ method: "POST", url: `/api/v1/webhooks/${id}/test`, key });
    const deliveries = (await t.request({ url: `/api/v1/webhooks/${id}/deliveries`, key })).json();
    const delivery = deliveries.items[0]?.id;
    expect(delivery).toEqual(expect.any(String));
    ids.push(id, delivery);
    owned.set(key, [id, delivery]);
  }
  const submissions = await t.request({ url: "/api/v1/submissions", key: SCORECARD_KEYS.acme });
  ids.push(...submissions.json().items.map((s: { id: string }) => s.id));
});
afterAll(async () => world?.t.close());

type OpenApiOperation = {
  parameters?: { in: string; name: string; schema?: { enum?: unknown[] } }[];
  requestBody?: { content?: Record<string, { schema?: { properties?: object } }> };
};

function documentedOperations(document: {
  paths: Record<string, Record<string, OpenApiOperation>>;
}): Operation[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => {
      const parameters = op.parameters ?? [];
      const properties = op.requestBody?.content?.["application/json"]?.schema?.properties;
      return {
        method: method.toUpperCase(),
        path,
        query: parameters.filter((p) => p.in === "query").map((p) => p.name),
        enums: parameters.flatMap((p) => (p.schema?.enum ?? []).map(String)),
        bodyFields: op.requestBody ? Object.keys(properties ?? {}) : undefined,
      };
    }),
  );
}

/** Names and values of this world, beside odd ones, so that some calls find something. */
const worldValue = fc.constantFrom(
  "chainlink",
  "uniswap",
  "bitcoin",
  "acme",
  "globex",
  "platform",
  "binance",
  "binance_futures",
  "kraken",
  "tether",
  "USD",
  "spot",
  "perp",
  "2025-03-01",
  "2025-03-05",
  "2024-02-29",
  "2025-03",
  "2025-13",
  "00000000-0000-0000-0000-000000000000",
  "0",
  "1",
  "-1",
  "300",
  "1e3",
  "quality",
  "true",
  "csv",
);
// Read when a value is drawn: the ids exist only once beforeAll has run.
const existingId = fc.nat().map((i) => ids[i % ids.length] ?? "");
const value = fc.oneof(
  { arbitrary: fc.oneof(worldValue, existingId), weight: 6 },
  { arbitrary: oddStrings, weight: 2 },
  { arbitrary: fc.integer().map(String), weight: 1 },
);
const key = fc.oneof(
  { arbitrary: fc.constantFrom(...Object.values(SCORECARD_KEYS)), weight: 8 },
  { arbitrary: fc.constantFrom(null, "nope"), weight: 1 },
);

const withQuery = (path: string, pairs: readonly [string, string][]) =>
  pairs.length === 0
    ? path
    : `${path}?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&")}`;

const queryPairs = (names: string[], enums: string[]) =>
  fc.array(
    fc.tuple(
      fc.constantFrom(...names, "other", "__proto__", "include"),
      fc.oneof(value, enums.length > 0 ? fc.constantFrom(...enums) : value),
    ),
    { maxLength: 6 },
  );

const fill = (template: string, values: readonly string[]) => {
  let i = 0;
  return template.replace(/\{[^}]+\}|:[A-Za-z]+/g, () => encodeURIComponent(values[i++] ?? "x"));
};

const anyJson = fc.oneof(
  value,
  fc.double().map((n) => (Number.isFinite(n) ? n : 0)),
  fc.boolean(),
  fc.constant(null),
  fc.anything({ maxDepth: 2 }),
);

const body = (fields: string[]) =>
  fc.oneof(
    fc.dictionary(fc.constantFrom(...fields, "__proto__", "other"), anyJson, { maxKeys: 6 }),
    fc.record(
      {
        url: fc.constantFrom(PUBLIC_URL, "http://127.0.0.1/x", "https://[::1]/x", "ftp://a"),
        events: fc.array(fc.constantFrom("*", "kpi.missed", "submission.rejected", "x"), {
          maxLength: 7,
        }),
        description: fc.oneof(fc.constant(null), value),
        disabled: fc.oneof(fc.boolean(), anyJson),
      },
      { requiredKeys: [] },
    ),
    anyJson,
  );

describe("fuzzing every documented read and webhook operation", () => {
  it("answers each caller's made-up parameters, queries and bodies with a 2xx or a specified 4xx", async () => {
    const randomPath = fc.array(value, { minLength: 2, maxLength: 2 });
    // Deleting only made-up ids keeps each caller's webhook for the other operations to find.
    const call = fc.tuple(fc.constantFrom(...operations), key).chain(([op, caller]) =>
      fc.record({
        op: fc.constant(op),
        caller: fc.constant(caller),
        pathValues:
          op.method === "DELETE"
            ? randomPath
            : fc.oneof(randomPath, fc.constant([...(owned.get(caller ?? "") ?? [])])),
        pairs: fc.oneof(fc.constant([]), queryPairs(op.query, op.enums)),
        payload:
          op.bodyFields === undefined
            ? fc.constant(undefined)
            : body(op.bodyFields).map((b) => JSON.stringify(b) ?? "null"),
      }),
    );
    await fc.assert(
      fc.asyncProperty(
        call,
        fc.constantFrom(undefined, "application/json", "text/csv", "*/*"),
        async ({ op, caller, pathValues, pairs, payload }, accept) => {
          const response = await world.t.request({
            method: op.method as "GET",
            url: withQuery(fill(op.path, pathValues), pairs),
            key: caller,
            headers: {
              ...(accept ? { accept } : {}),
              ...(payload === undefined ? {} : { "content-type": "application/json" }),
            },
            payload,
          });
          expectSpecifiedShape(response);
        },
      ),
      { numRuns: RUNS * 4 },
    );
  });
});

/** The dashboard's pages, with `:name` for each path parameter. */
const DASHBOARD_PAGES = [
  "/app",
  "/app/overview",
  "/app/coins",
  "/app/coins/:coin",
  "/app/coins/:coin/:organization",
  "/app/coins/:coin/:organization/calendar",
  "/app/coins/:coin/:organization/markets/:exchange/:quote/:instrumentType",
  "/app/markets",
  "/app/reports",
  "/app/reports.csv",
  "/app/submissions",
  "/app/submissions/:id",
  "/app/market-data",
  "/app/keys",
  "/app/organizations",
  "/app/engagements",
];

/** Path values that name something: a coin, a market maker and one of its obligation's markets. */
const marketPath = fc
  .tuple(fc.constantFrom("chainlink", "uniswap"), fc.constantFrom(...Object.values(MARKETS)))
  .map(([coin, m]) => [coin, "acme", m.exchangeId, m.quote, m.instrumentType]);

describe("fuzzing the dashboard", () => {
  const sessions: InjectedSession[] = [];
  beforeAll(async () => {
    for (const k of [SCORECARD_KEYS.acme, SCORECARD_KEYS.project, SCORECARD_KEYS.operator])
      sessions.push(await injectSignIn(world.t, k));
  });

  it("answers each kind of caller's made-up pages and queries with a page, never a 5xx", async () => {
    const names = ["dateGte", "dateLte", "range", "page", "pageSize", "include", "status"];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...DASHBOARD_PAGES),
        fc.nat({ max: 2 }),
        fc.oneof(fc.array(value, { minLength: 5, maxLength: 5 }), marketPath),
        queryPairs(names, ["7d", "30d", "90d", "accepted", "rejected", "quality"]),
        async (template, who, pathValues, pairs) => {
          const url = withQuery(fill(template, pathValues), pairs);
          const response = await (sessions[who] as InjectedSession).get(url);
          expect(response.statusCode, url).toBeLessThan(500);
          if (response.statusCode >= 400 && response.statusCode !== 414)
            expect(String(response.headers["content-type"]), url).toMatch(/^text\/html/);
        },
      ),
      { numRuns: RUNS * 4 },
    );
  });
});
