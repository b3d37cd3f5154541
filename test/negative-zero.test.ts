import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v1Record, v2Record } from "./helpers/fixture.js";
import { SPEC_V1_METRICS, SPEC_V2_ONLY_METRICS } from "./helpers/spec-fields.js";
import { submit } from "./helpers/submission.js";

/**
 * JSON has a `-0` (and `-0.0`), `>= 0` admits it, and float8 keeps its sign: stored as sent, a
 * listing printed `-0` where the CSV said `0`. A metric of -0 is stored as 0.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const NEGATIVE_ZEROS = ["-0", "-0.0"];

/** A submission body's text with every metric of the record written as `-0` or `-0.0`. */
function bodyWithNegativeZeros(record: Record<string, unknown>, metrics: string[]): string {
  const marked = { ...record };
  metrics.forEach((m, i) => {
    marked[m] = `@${i % 2}@`;
  });
  const body = JSON.stringify({ data: [marked] });
  return body.replace(/"@([01])@"/g, (_, i: string) => NEGATIVE_ZEROS[Number(i)] ?? "");
}

const V2_METRICS = [...SPEC_V1_METRICS, ...SPEC_V2_ONLY_METRICS];

// A one-letter quote symbol is left to Zod by the fast parser (see fast-parse.ts): both paths.
const cases = [
  { version: 1, path: "fast", record: v1Record({ date: "2025-03-01" }), metrics: SPEC_V1_METRICS },
  {
    version: 1,
    path: "Zod",
    record: v1Record({ date: "2025-03-02", quoteCoinId: undefined, quoteCoinSymbol: "X" }),
    metrics: SPEC_V1_METRICS,
  },
  { version: 2, path: "fast", record: v2Record({ date: "2025-03-03" }), metrics: V2_METRICS },
  {
    version: 2,
    path: "Zod",
    record: v2Record({ date: "2025-03-04", quoteCoinId: undefined, quoteCoinSymbol: "X" }),
    metrics: V2_METRICS,
  },
] as const;

/** The text of every float8 column of a table's rows of one date, as PostgreSQL prints it. */
async function float8Texts(table: "reports" | "report_versions", date: string) {
  const columns = await sql<{ name: string }>`
    select column_name as name from information_schema.columns
    where table_name = ${table} and data_type = 'double precision'`.execute(t.database.db);
  expect(columns.rows.length).toBeGreaterThanOrEqual(20);
  const texts = sql.join(columns.rows.map((c) => sql`x.${sql.ref(c.name)}::text`));
  const rows = await sql<Record<string, string | null>>`
    select ${texts} from ${sql.table(table)} x
    ${table === "reports" ? sql`` : sql`join reports r on r.id = x.report_id`}
    where ${table === "reports" ? sql`x.date` : sql`r.date`} = ${date}::date`.execute(
    t.database.db,
  );
  return rows.rows.flatMap((row) => Object.values(row)).filter((v) => v !== null);
}

for (const { version, path, record, metrics } of cases)
  describe(`a v${version} metric sent as -0 or -0.0 (${path} path)`, () => {
    const date = String(record.date);
    const names = [...metrics];

    it("is stored as 0 in the report and its version", async () => {
      const body = bodyWithNegativeZeros(record, names);
      expect(body).toContain(":-0,");
      expect(body).toContain(":-0.0,");
      const response = await submit(t, version, body);
      expect(response.statusCode, response.body).toBe(201);
      for (const table of ["reports", "report_versions"] as const) {
        const texts = await float8Texts(table, date);
        expect(texts.length).toBeGreaterThanOrEqual(names.length);
        expect(new Set(texts)).toEqual(new Set(["0"]));
      }
    });

    it("is listed as 0 in JSON and in CSV", async () => {
      const query = { dateGte: date, dateLte: date };
      const json = await t.request({ url: "/api/v1/reports", query, key: KEYS.acme });
      expect(json.statusCode).toBe(200);
      expect(json.body).not.toMatch(/:-0[,}]/);
      const [item] = json.json().items;
      for (const m of names) expect(Object.is(item[m], 0), m).toBe(true);

      const csv = await t.request({
        url: "/api/v1/reports",
        query,
        key: KEYS.acme,
        headers: { accept: "text/csv" },
      });
      const [header, row] = csv.body
        .trim()
        .split("\r\n")
        .map((line) => line.split(","));
      for (const m of names) expect(row?.[header?.indexOf(m) ?? -1], m).toBe("0");
    });
  });
