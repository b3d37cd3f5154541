import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportCardSchema } from "../src/schemas/report-card.js";
import { purgeSubmissions } from "../src/services/submission-log.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { type CliDatabase, cliDatabase } from "./helpers/cli.js";
import { baseFixture, KEYS, v2Record } from "./helpers/fixture.js";
import { submit } from "./helpers/submission.js";

let clock = new Date("2026-11-01T08:00:00Z");
let t: TestApp;
const ids: string[] = [];

/** Five submissions a day apart (Nov 1 to 5, 08:00): accepted, rejected, accepted, rejected, dry run. */
beforeAll(async () => {
  t = await startTestApp({ now: () => clock });
  const bodies = [
    { data: [v2Record({ date: "2026-10-01" })] },
    { data: [] },
    { data: [v2Record({ date: "2026-10-01" }), v2Record({ date: "2026-10-02" })] },
    { data: [v2Record({ baseCoinId: "nope" })] },
    { data: [v2Record({ date: "2026-10-03" })] },
  ];
  for (const [day, body] of bodies.entries()) {
    clock = new Date(Date.UTC(2026, 10, day + 1, 8));
    const headers: Record<string, string> = day === 4 ? { "x-dry-run": "true" } : {};
    const response = await submit(t, 2, body, { headers });
    ids.push(String(response.headers["x-submission-id"]));
  }
});
afterAll(async () => t?.close());

async function list(query: Record<string, string>, key = KEYS.acme) {
  const response = await t.request({ method: "GET", url: "/api/v1/submissions", key, query });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

describe("GET /api/v1/submissions", () => {
  it("lists the caller's submissions newest first with every field", async () => {
    const page = await list({});
    expect(page).toMatchObject({ page: 1, totalPages: 1, totalCount: 5 });
    expect(page.items.map((i: { id: string }) => i.id)).toEqual([...ids].reverse());
    expect(page.items[2]).toEqual({
      id: ids[2],
      receivedAt: "2026-11-03T08:00:00.000Z",
      apiVersion: 2,
      dryRun: false,
      status: "accepted",
      recordCount: 2,
      createdCount: 1,
      updatedCount: 1,
      problemCount: 0,
      keyPrefix: null,
      idempotencyKey: null,
    });
  });

  it("filters by status and received day, and pages", async () => {
    const rejected = await list({ status: "rejected" });
    expect(rejected.items.map((i: { id: string }) => i.id)).toEqual([ids[3], ids[1]]);
    const days = await list({ dateGte: "2026-11-02", dateLte: "2026-11-04" });
    expect(days.items.map((i: { id: string }) => i.id)).toEqual([ids[3], ids[2], ids[1]]);
    const second = await list({ page: "2", pageSize: "2" });
    expect(second).toMatchObject({ page: 2, totalPages: 3, totalCount: 5 });
    expect(second.items.map((i: { id: string }) => i.id)).toEqual([ids[2], ids[1]]);
    expect((await list({ page: "9", pageSize: "2" })).items).toEqual([]);
    expect((await list({}, KEYS.globex)).totalCount).toBe(0);
  });

  it("pages by `before` (the last id seen), unshifted by submissions received meanwhile", async () => {
    const first = await list({ pageSize: "2" });
    expect(first.items.map((i: { id: string }) => i.id)).toEqual([ids[4], ids[3]]);
    // A submission arrives between the pages: page 2 by number would repeat ids[3].
    clock = new Date("2026-11-06T08:00:00Z");
    const newest = await submit(t, 2, { data: [] });
    try {
      const next = await list({ pageSize: "2", before: String(ids[3]).toUpperCase() });
      expect(next).toMatchObject({ page: 1, totalPages: 2, totalCount: 3 });
      expect(next.items.map((i: { id: string }) => i.id)).toEqual([ids[2], ids[1]]);
      const last = await list({ pageSize: "2", before: String(ids[1]), status: "accepted" });
      expect(last.items.map((i: { id: string }) => i.id)).toEqual([ids[0]]);
    } finally {
      await sql`delete from submissions where id = ${String(newest.headers["x-submission-id"])}`.execute(
        t.database.db,
      );
    }
  });

  it("refuses a `before` that is not one of the organization's submissions, naming it", async () => {
    for (const [before, key] of [
      ["not-an-id", KEYS.acme],
      ["00000000-0000-4000-8000-000000000000", KEYS.acme],
      [String(ids[0]), KEYS.globex],
    ] as const) {
      const response = await t.request({
        url: "/api/v1/submissions",
        key,
        query: { before },
      });
      expect(response.statusCode, before).toBe(400);
      expect(response.json().message).toEqual([
        { path: "before", message: "Expected the id of one of the organization's submissions" },
      ]);
    }
  });

  it("takes every date the parameters accept, from year 0000 to 9999 (no 500)", async () => {
    const all = [...ids].reverse();
    const cases: [Record<string, string>, string[]][] = [
      [{ dateGte: "0000-01-01" }, all],
      [{ dateLte: "0000-01-01" }, []],
      [{ dateLte: "9999-12-31" }, all],
      [{ dateGte: "9999-12-31" }, []],
      [{ dateGte: "0000-01-01", dateLte: "9999-12-31" }, all],
      [{ dateGte: "1999-12-31", dateLte: "2026-11-01" }, [ids[0] as string]],
    ];
    for (const [query, expected] of cases) {
      const page = await list(query);
      expect(
        page.items.map((i: { id: string }) => i.id),
        JSON.stringify(query),
      ).toEqual(expected);
    }
  });

  it("refuses bad parameters in the 400 shape", async () => {
    for (const [query, path] of [
      [{ status: "pending" }, "status"],
      [{ pageSize: "501" }, "pageSize"],
      [{ page: "1000000000" }, "page"],
      [{ dateGte: "2026-02-30" }, "dateGte"],
    ] as const) {
      const response = await t.request({
        method: "GET",
        url: "/api/v1/submissions",
        key: KEYS.acme,
        query,
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().message[0].path).toBe(path);
    }
  });
});

describe("purging the submission log", () => {
  it("deletes old entries in small batches and keeps every report and version", async () => {
    const versions = async () =>
      (
        await sql<{ n: number }>`select count(*)::int as n from report_versions`.execute(
          t.database.db,
        )
      ).rows[0]?.n;
    const before = await versions();
    clock = new Date("2026-11-06T12:00:00Z");
    // Keep 2 days: everything received before Nov 4, 00:00 goes, two rows per statement.
    const result = await purgeSubmissions(
      { stores: t.database.stores, now: () => clock },
      { days: 2, batchSize: 2 },
    );
    expect(result).toEqual({ purged: 3, before: "2026-11-04T00:00:00.000Z" });
    expect((await list({})).items.map((i: { id: string }) => i.id)).toEqual([ids[4], ids[3]]);
    expect(await versions()).toBe(before);
    const problems = await sql<{ n: number }>`
      select count(*)::int as n from submission_problem_counts where submission_id = ${ids[1]}`.execute(
      t.database.db,
    );
    expect(problems.rows[0]?.n).toBe(0);
    const gone = await t.request({
      method: "GET",
      url: `/api/v1/submissions/${ids[0]}`,
      key: KEYS.acme,
    });
    expect(gone.statusCode).toBe(404);
  });
});

describe("the CLI", () => {
  let cliDb: CliDatabase;
  beforeAll(async () => {
    cliDb = await cliDatabase("submission-log-cli-");
    expect((await cliDb.seed(baseFixture())).code).toBe(0);
  });
  afterAll(() => cliDb?.close());

  it("prints a market maker's report card, and refuses an unknown one", async () => {
    const { code, out } = await cliDb.cli("report-card", "acme", "--month", "2026-10");
    expect(code).toBe(0);
    expect(out.split("\n").slice(0, 3)).toEqual([
      "report card acme 2026-10",
      "submissions 0 (rejected 0)",
      "records accepted 0, rejected 0",
    ]);
    const json = await cliDb.cli("report-card", "acme", "--month", "2026-10", "--json");
    expect(JSON.parse(json.out)).toMatchObject({ organizationId: "acme", qualityFlags: {} });
    // The API's answer: its keys in the order of the schema its serializer writes.
    expect(Object.keys(JSON.parse(json.out))).toEqual(Object.keys(reportCardSchema.shape));
    const unknown = await cliDb.cli("report-card", "nope");
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("No market maker has the id 'nope'");
    await cliDb.cli("org", "create", "platform", "The Platform", "--kind", "operator");
    const operator = await cliDb.cli("report-card", "platform");
    expect(operator.code).toBe(1);
    expect(operator.err).toBe(
      "error: 'platform' is an operator organization; report cards are for market makers\n",
    );
    expect((await cliDb.cli("report-card", "acme", "--month", "10-2026")).code).toBe(2);
  });

  it("purges with SUBMISSION_LOG_DAYS or --days", async () => {
    const { code, out } = await cliDb.cli("submissions", "purge", "--days", "30");
    expect(code).toBe(0);
    expect(out).toMatch(/^purged 0 submissions received before \d{4}-\d\d-\d\dT00:00:00\.000Z\n$/);
  });
});
