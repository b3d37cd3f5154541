import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { KEYS, v1Record, v2Record } from "../helpers/fixture.js";
import { expectSpecifiedShape, oddStrings } from "../helpers/fuzz.js";

/** Bounded in CI; `npm run fuzz` sets FUZZ_RUNS much higher. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);

let t: TestApp;
beforeAll(async () => {
  // Lifted so that a long hunt (`npm run fuzz`) is not cut short by the rate limits.
  t = await startTestApp({
    env: { RATE_LIMIT_PER_MINUTE: "1000000", RATE_LIMIT_PER_ADDRESS_PER_MINUTE: "1000000" },
  });
});
afterAll(async () => t?.close());

const oddNumbers = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(-0, -1, 1e308, Number.MAX_SAFE_INTEGER, 100.0000001, 1e-320),
);
const anyValue = fc.oneof(
  oddStrings,
  oddNumbers,
  fc.boolean(),
  fc.constant(null),
  fc.anything({ maxDepth: 3 }),
);
const fields = Object.keys(v2Record());

/** A valid record with some fields removed, replaced, or added. */
const mutatedRecord = (base: Record<string, unknown>) =>
  fc
    .record({
      drop: fc.subarray(fields, { maxLength: 4 }),
      replace: fc.dictionary(fc.constantFrom(...fields), anyValue, { maxKeys: 4 }),
      extra: fc.dictionary(
        fc.constantFrom("__proto__", "constructor", "prototype", "x", "toString"),
        anyValue,
        { maxKeys: 2 },
      ),
    })
    .map(({ drop, replace, extra }) => {
      const record: Record<string, unknown> = { ...base, ...replace };
      for (const f of drop) delete record[f];
      return { record, extra };
    });

function bodyText(
  records: { record: Record<string, unknown>; extra: Record<string, unknown> }[],
): string {
  // Keys such as __proto__ must reach the server as JSON text, not as JavaScript prototypes.
  const parts = records.map(({ record, extra }) => {
    const json = JSON.stringify(record);
    const extras = Object.entries(extra).map(
      ([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v ?? null) ?? "null"}`,
    );
    return extras.length === 0
      ? json
      : `${json.slice(0, -1)}${json.length > 2 ? "," : ""}${extras.join(",")}}`;
  });
  return `{"data":[${parts.join(",")}]}`;
}

describe("fuzzing the API", () => {
  it("answers mutated v2 and v1 batches with a 2xx or a specified 4xx", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(1, 2),
        fc.array(mutatedRecord(v2Record({ date: "2024-07-01" })), { minLength: 1, maxLength: 5 }),
        fc.constantFrom(undefined, "true", "false", "TRUE", "maybe"),
        async (version, records, dryRun) => {
          const response = await t.request({
            method: "POST",
            url: `/api/v${version}/report`,
            key: KEYS.acme,
            headers: {
              "content-type": "application/json",
              ...(dryRun ? { "x-dry-run": dryRun } : {}),
            },
            payload: bodyText(
              version === 1
                ? records.map((r) => ({ ...r, record: { ...v1Record(), ...r.record } }))
                : records,
            ),
          });
          expectSpecifiedShape(response);
        },
      ),
      { numRuns: RUNS },
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("answers arbitrary JSON bodies, deep nesting and odd arrays without a 5xx", async () => {
    const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
    const bodies = fc.oneof(
      fc.json({ maxDepth: 4 }),
      fc.constantFrom(
        "",
        "{",
        "null",
        "[]",
        '{"data":null}',
        '{"data":{}}',
        '{"data":[]}',
        `{"data":${deep(5000)}}`,
        `{"data":[${"{},".repeat(400)}{}]}`,
        '{"__proto__":{"polluted":true},"data":[{"__proto__":{"polluted":true}}]}',
        '{"constructor":{"prototype":{"polluted":true}},"data":[1]}',
        '{"data":[{"bidDepth50":1e309}]}',
      ),
    );
    await fc.assert(
      fc.asyncProperty(bodies, fc.constantFrom(1, 2), async (payload, version) => {
        const response = await t.request({
          method: "POST",
          url: `/api/v${version}/report`,
          key: KEYS.acme,
          headers: { "content-type": "application/json" },
          payload,
        });
        expectSpecifiedShape(response);
      }),
      { numRuns: RUNS },
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("answers random query strings of the list endpoint without a 5xx", async () => {
    const name = fc.constantFrom(
      "baseCoinId",
      "exchangeId",
      "dateGte",
      "dateLte",
      "page",
      "pageSize",
      "other",
      "__proto__",
    );
    const value = fc.oneof(
      oddStrings,
      fc.integer().map(String),
      fc.constantFrom("0", "-1", "1.5", "99999999999999", "2025-01-01"),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(name, value), { maxLength: 6 }), async (pairs) => {
        const query = pairs
          .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
          .join("&");
        const response = await t.request({
          method: "GET",
          url: `/api/v1/reports?${query}`,
          key: KEYS.acme,
        });
        expectSpecifiedShape(response);
        if (response.statusCode === 200) {
          const page = response.json() as { items: { exchangeId: string }[]; totalCount: number };
          expect(page.totalCount).toBeGreaterThanOrEqual(page.items.length);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("refuses enormous arrays with the size problem alone", async () => {
    const payload = `{"data":[${Array.from({ length: 5000 }, () => "0").join(",")}]}`;
    const response = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      headers: { "content-type": "application/json" },
      payload,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toEqual([
      { path: "data", message: "Array must contain at most 300 element(s)" },
    ]);
  });
});
