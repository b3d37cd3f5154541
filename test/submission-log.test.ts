import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROBLEM_CODES } from "../src/domain/problem-codes.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v1Record, v2Record } from "./helpers/fixture.js";
import { setOrganizationKind } from "./helpers/obligations.js";
import { problemsOf, submit, type Version } from "./helpers/submission.js";
import { listenWithAnEndpoint } from "./helpers/webhook-jobs.js";

const TODAY = "2025-06-15";
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({
    now: () => new Date(`${TODAY}T12:00:00Z`),
    env: { BODY_LIMIT_BYTES: "100000" },
  });
});
afterAll(async () => t?.close());

const INFINITE = "__INFINITE__";

/** One record per rule (v2-only rules marked), each breaking exactly that rule. */
const CASES: {
  record: (v: Version) => Record<string, unknown>;
  v2Only?: boolean;
  problem: [string, string, string];
}[] = [
  {
    record: (v) => without(base(v), "baseCoinId"),
    problem: ["baseCoinId", "Required", "required"],
  },
  {
    record: (v) => ({ ...base(v), bidDepth50: "12" }),
    problem: ["bidDepth50", "Expected number, received string", "wrong_type"],
  },
  {
    record: (v) => ({ ...base(v), bidDepth50: INFINITE }),
    problem: ["bidDepth50", "Number must be finite", "not_finite"],
  },
  {
    record: (v) => ({ ...base(v), bidDepth50: -1 }),
    problem: ["bidDepth50", "Number must be greater than or equal to 0", "below_minimum"],
  },
  {
    record: (v) => ({ ...base(v), bidAskSpread: 101 }),
    problem: ["bidAskSpread", "Number must be less than or equal to 100", "above_maximum"],
  },
  {
    record: (v) => ({ ...base(v), instrumentType: "swap" }),
    v2Only: true,
    problem: [
      "instrumentType",
      "Invalid enum value. Expected 'spot' | 'perp', received 'swap'",
      "invalid_enum",
    ],
  },
  {
    record: (v) => ({ ...base(v), exchangeId: "" }),
    problem: ["exchangeId", "String must contain at least 1 character(s)", "text_too_short"],
  },
  {
    record: (v) => ({ ...base(v), baseCoinId: "x".repeat(201) }),
    problem: ["baseCoinId", "String must contain at most 200 character(s)", "text_too_long"],
  },
  {
    record: (v) => ({ ...base(v), baseCoinId: "a\u0000b" }),
    problem: ["baseCoinId", "String must not contain NUL characters", "text_not_storable"],
  },
  {
    record: (v) => ({ ...base(v), date: "2025-02-30" }),
    problem: ["date", "Invalid date, expected YYYY-MM-DD", "invalid_date"],
  },
  {
    record: (v) => ({ ...base(v), date: TODAY }),
    problem: ["date", "Date must be in the past", "date_not_past"],
  },
  {
    record: (v) => ({ ...base(v), date: "1999-12-31" }),
    problem: ["date", "Date must not be before 2000-01-01", "date_too_early"],
  },
  {
    record: (v) => ({ ...base(v), exchangeId: "nope" }),
    problem: [
      "exchangeId",
      "Exchange with id 'nope' does not match any supported exchange id",
      "unknown_exchange",
    ],
  },
  {
    record: (v) => ({ ...base(v), baseCoinId: "nope" }),
    problem: [
      "baseCoinId",
      "Base coin with id 'nope' does not match any valid ticker id",
      "unknown_base_coin",
    ],
  },
  {
    record: (v) => ({ ...base(v), quoteCoinId: "nope" }),
    problem: [
      "quoteCoinId",
      "Quote coin with id 'nope' does not match any valid ticker id",
      "unknown_quote_coin",
    ],
  },
  {
    record: (v) => without(base(v), "quoteCoinId"),
    problem: ["quoteCoinId", "Either quoteCoinId or quoteCoinSymbol is required", "missing_quote"],
  },
  {
    record: (v) => ({ ...base(v), exchangeId: "deribit", instrumentType: "spot" }),
    v2Only: true,
    problem: [
      "instrumentType",
      "Exchange 'Deribit' is not a spot exchange; set instrumentType to 'perp' for perpetual/derivatives data",
      "not_spot_exchange",
    ],
  },
  {
    record: (v) => ({
      ...base(v),
      exchangeId: "kraken",
      quoteCoinId: undefined,
      quoteCoinSymbol: "USD",
      instrumentType: "perp",
    }),
    v2Only: true,
    problem: [
      "instrumentType",
      "Exchange 'Kraken' is not a derivatives exchange; set instrumentType to 'spot' for spot data",
      "not_derivatives_exchange",
    ],
  },
];

function base(version: Version): Record<string, unknown> {
  return version === 2 ? v2Record() : v1Record({ bidAskSpread: 0.5 });
}

function without(record: Record<string, unknown>, field: string): Record<string, unknown> {
  const copy = { ...record };
  delete copy[field];
  return copy;
}

/** The batch: every case, then a valid record and its duplicate (duplicate_record_key). */
function batchOf(version: Version) {
  const cases = CASES.filter((c) => version === 2 || !c.v2Only);
  const records = [...cases.map((c) => c.record(version)), base(version), base(version)];
  const body = JSON.stringify({ data: records }).replace(`"${INFINITE}"`, "1e309");
  const problems = [
    ...cases.map((c, i) => ({
      path: `data.${i}.${c.problem[0]}`,
      message: c.problem[1],
      code: c.problem[2],
    })),
    {
      path: `data.${cases.length + 1}`,
      message: `Duplicate record key (same as data.${cases.length})`,
      code: "duplicate_record_key",
    },
  ];
  return { body, problems, recordCount: records.length };
}

async function detailOf(id: unknown, key = KEYS.acme) {
  const response = await t.request({
    method: "GET",
    url: `/api/v1/submissions/${String(id)}`,
    key,
  });
  return response;
}

describe("submission feedback", () => {
  it("keeps every problem of a batch breaking each rule once, with its code, as the 400 answered it", async () => {
    for (const version of [2, 1] as Version[]) {
      const batch = batchOf(version);
      const response = await submit(t, version, batch.body);
      const answered = problemsOf(response);
      // The specified 400 is unchanged: path and message only.
      expect(answered).toEqual(batch.problems.map(({ path, message }) => ({ path, message })));
      const id = response.headers["x-submission-id"];
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const detail = await detailOf(id);
      expect(detail.statusCode).toBe(200);
      expect(detail.json()).toMatchObject({
        id,
        apiVersion: version,
        dryRun: false,
        status: "rejected",
        recordCount: batch.recordCount,
        createdCount: 0,
        updatedCount: 0,
        problemCount: batch.problems.length,
        keyPrefix: null,
        idempotencyKey: null,
      });
      expect(detail.json().problems).toEqual(batch.problems);
    }
  });

  it("gives the same rule the same code in v1 and v2", async () => {
    const codes = async (version: Version) => {
      const response = await submit(t, version, batchOf(version).body);
      const detail = (await detailOf(response.headers["x-submission-id"])).json();
      return detail.problems.map((p: { path: string; code: string }) => [
        p.path.split(".").slice(2).join("."),
        p.code,
      ]);
    };
    const v2 = (await codes(2)).filter((_: unknown, i: number) => !CASES[i]?.v2Only);
    const v1 = await codes(1);
    expect(v1.map((p: string[]) => p[1])).toEqual(v2.map((p: string[]) => p[1]));
    expect(v1.length).toBe(CASES.filter((c) => !c.v2Only).length + 1);
  });

  it("codes the refusals of the batch, a header and the body as a whole", async () => {
    const cases: [
      Parameters<typeof submit>,
      number,
      { path: string | null; message: string; code: string },
    ][] = [
      [
        [t, 2, { data: [] }],
        400,
        {
          path: "data",
          message: "Array must contain at least 1 element(s)",
          code: "batch_too_small",
        },
      ],
      [
        [t, 2, { data: Array.from({ length: 301 }, () => ({})) }],
        400,
        {
          path: "data",
          message: "Array must contain at most 300 element(s)",
          code: "batch_too_large",
        },
      ],
      [
        [t, 2, { data: [v2Record()] }, { headers: { "x-dry-run": "yes" } }],
        400,
        { path: "x-dry-run", message: "Expected 'true' or 'false'", code: "invalid_header" },
      ],
      [
        [t, 2, '{"data": ['],
        400,
        { path: null, message: "Malformed JSON body", code: "malformed_json" },
      ],
      [
        [t, 2, "x".repeat(100_001)],
        413,
        { path: null, message: "Request body is larger than the limit", code: "body_too_large" },
      ],
      [
        [t, 2, "data", { headers: { "content-type": "text/plain" } }],
        415,
        {
          path: null,
          message: "Unsupported Media Type: send application/json",
          code: "unsupported_media_type",
        },
      ],
      [
        [t, 2, gzipSync('{"data": []}'), { headers: { "content-encoding": "gzip" } }],
        415,
        {
          path: null,
          message: "Unsupported Content-Encoding: send the body uncompressed",
          code: "unsupported_media_type",
        },
      ],
      [
        [t, 2, []],
        400,
        { path: null, message: "Expected object, received array", code: "wrong_type" },
      ],
    ];
    for (const [args, status, problem] of cases) {
      const response = await submit(...args);
      expect(response.statusCode, response.body).toBe(status);
      const detail = (await detailOf(response.headers["x-submission-id"])).json();
      expect(detail.status).toBe("rejected");
      expect(detail.problems.slice(0, 1)).toEqual([problem]);
    }
  });

  it("numbers accepted submissions and dry runs, and keeps a valid Idempotency-Key", async () => {
    const accepted = await submit(
      t,
      2,
      { data: [v2Record({ date: "2025-04-01" })] },
      { headers: { "idempotency-key": "batch-1" } },
    );
    expect(accepted.statusCode).toBe(201);
    const dry = await submit(
      t,
      1,
      { data: [v1Record({ date: "2025-04-02" })] },
      { headers: { "x-dry-run": "TRUE" } },
    );
    expect(dry.statusCode).toBe(201);
    // A key that is not printable ASCII refuses the submission (CONTRACT section 5); the log
    // keeps no key it could not have used.
    const badKey = await submit(
      t,
      1,
      { data: [v1Record({ date: "2025-04-02" })] },
      { headers: { "idempotency-key": "\u00e9" } },
    );
    expect(badKey.statusCode).toBe(400);
    expect((await detailOf(badKey.headers["x-submission-id"])).json()).toMatchObject({
      status: "rejected",
      idempotencyKey: null,
      problems: [
        {
          path: "Idempotency-Key",
          message: "Expected 1 to 255 printable ASCII characters",
          code: "invalid_header",
        },
      ],
    });
    expect((await detailOf(accepted.headers["x-submission-id"])).json()).toMatchObject({
      status: "accepted",
      dryRun: false,
      apiVersion: 2,
      recordCount: 1,
      createdCount: 1,
      updatedCount: 0,
      problemCount: 0,
      idempotencyKey: "batch-1",
      problems: [],
    });
    expect((await detailOf(dry.headers["x-submission-id"])).json()).toMatchObject({
      status: "accepted",
      dryRun: true,
      apiVersion: 1,
      recordCount: 1,
      createdCount: 1,
      idempotencyKey: null,
    });
  });

  it("a replayed keyed submission names the submission that was kept, and logs no new one", async () => {
    const body = { data: [v2Record({ date: "2025-04-03" })] };
    const headers = { "idempotency-key": "replayed-batch" };
    const first = await submit(t, 2, body, { headers });
    expect(first.statusCode).toBe(201);
    const count = async () =>
      (await sql<{ n: number }>`select count(*)::int as n from submissions`.execute(t.database.db))
        .rows[0]?.n;
    const before = await count();
    const replay = await submit(t, 2, body, { headers });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.headers["x-submission-id"]).toBe(first.headers["x-submission-id"]);
    expect(replay.body).toBe(first.body);
    expect(await count()).toBe(before);
  });

  it("logs an Idempotency-Key used with a different request as rejected, with its code", async () => {
    const headers = { "idempotency-key": "reused-key" };
    const first = await submit(t, 2, { data: [v2Record({ date: "2025-04-04" })] }, { headers });
    expect(first.statusCode).toBe(201);
    const other = await submit(t, 2, { data: [v2Record({ date: "2025-04-05" })] }, { headers });
    expect(other.statusCode).toBe(422);
    expect((await detailOf(other.headers["x-submission-id"])).json()).toMatchObject({
      status: "rejected",
      recordCount: 1,
      createdCount: 0,
      problemCount: 1,
      idempotencyKey: "reused-key",
      problems: [
        {
          path: "Idempotency-Key",
          message: "Idempotency-Key was used with a different request",
          code: "idempotency_key_reused",
        },
      ],
    });
  });

  it("answers 404 for another organization's submission, and for ids that are none", async () => {
    const response = await submit(t, 2, { data: [] });
    const id = String(response.headers["x-submission-id"]);
    for (const [key, url] of [
      [KEYS.globex, id],
      [KEYS.acme, "not-a-uuid"],
      [KEYS.acme, "00000000-0000-4000-8000-000000000000"],
    ]) {
      const detail = await detailOf(url, key);
      expect(detail.statusCode).toBe(404);
      expect(detail.json()).toEqual({
        statusCode: 404,
        error: "Not Found",
        message: "Submission not found",
      });
    }
    const theirs = await t.request({ method: "GET", url: "/api/v1/submissions", key: KEYS.globex });
    expect(theirs.json().items.map((i: { id: string }) => i.id)).not.toContain(id);
  });

  it("stores the first 1,000 problems and counts them all, and nothing of the records", async () => {
    const response = await submit(t, 1, {
      data: Array.from({ length: 1000 }, () => ({ bidDepth50: 7_654_321.5 })),
    });
    const answered = problemsOf(response);
    expect(answered.at(-1)?.message).toMatch(/^… and \d+ more problems$/);
    const detail = (await detailOf(response.headers["x-submission-id"])).json();
    expect(detail.problemCount).toBe(4000);
    expect(detail.problems).toHaveLength(1000);
    expect(detail.problems[0]).toEqual({
      path: "data.0.date",
      message: "Required",
      code: "required",
    });
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from submissions where problems::text like '%7654321%'`.execute(
      t.database.db,
    );
    expect(rows[0]?.n).toBe(0);
  });

  it("raises submission.rejected for a rejected submission, in the log's transaction, but not for a dry run", async () => {
    await listenWithAnEndpoint(t.database.db); // events are recorded only then
    const real = await submit(t, 2, { data: [] });
    const dry = await submit(t, 2, { data: [] }, { headers: { "x-dry-run": "true" } });
    const { rows } = await sql<{
      dedup_key: string;
      organization_id: string;
      base_coin_id: string | null;
      data: unknown;
    }>`
      select dedup_key, organization_id, base_coin_id, data from webhook_events
      where type = 'submission.rejected' and dedup_key in (${real.headers["x-submission-id"]}, ${dry.headers["x-submission-id"]})`.execute(
      t.database.db,
    );
    expect(rows).toEqual([
      {
        dedup_key: real.headers["x-submission-id"],
        organization_id: "acme",
        base_coin_id: null,
        data: {
          submissionId: real.headers["x-submission-id"],
          apiVersion: 2,
          recordCount: 0,
          problemCount: 1,
        },
      },
    ]);
  });

  it("neither numbers nor logs a 401; logs a project key's 403 for the project, announcing nothing", async () => {
    const logged = async () =>
      (await sql<{ n: number }>`select count(*)::int as n from submissions`.execute(t.database.db))
        .rows[0]?.n;
    await listenWithAnEndpoint(t.database.db); // events are recorded only then
    const eventsOf = async (id: unknown) =>
      (
        await sql<{ n: number }>`select count(*)::int as n from webhook_events
          where dedup_key = ${String(id)}`.execute(t.database.db)
      ).rows[0]?.n;
    const before = await logged();
    const unauthenticated = await submit(
      t,
      2,
      { data: [] },
      { key: "no-such-key-0123456789abcdef" },
    );
    expect(unauthenticated.statusCode).toBe(401);
    expect(unauthenticated.headers["x-submission-id"]).toBeUndefined();
    expect(await logged()).toBe(before);

    await setOrganizationKind(t.database.db, "globex", "project", ["chainlink"]);
    try {
      const forbidden = await submit(t, 1, { data: [v1Record()] }, { key: KEYS.globex });
      expect(forbidden.statusCode).toBe(403);
      const id = forbidden.headers["x-submission-id"];
      expect(id).toEqual(expect.any(String));
      const detail = await t.request({ url: `/api/v1/submissions/${id}`, key: KEYS.globex });
      expect(detail.json()).toMatchObject({
        id,
        apiVersion: 1,
        status: "rejected",
        recordCount: 0,
        problemCount: 1,
        problems: [{ message: "This API key cannot submit reports", code: "key_may_not_submit" }],
      });
      expect(await logged()).toBe((before ?? 0) + 1);
      // submission.rejected is a market maker's event: none for the project's attempt.
      expect(await eventsOf(id)).toBe(0);
      // Acme's log does not show it.
      const acme = await t.request({ url: `/api/v1/submissions/${id}`, key: KEYS.acme });
      expect(acme.statusCode).toBe(404);
    } finally {
      await setOrganizationKind(t.database.db, "globex", "market_maker");
    }
  });

  it("documents the whole catalogue in the docs, the README and the OpenAPI enum", async () => {
    const codes = Object.keys(PROBLEM_CODES);
    const docs = readFileSync("docs/submission-feedback.md", "utf8");
    expect([...docs.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1])).toEqual(codes);
    const readme = readFileSync("README.md", "utf8");
    for (const code of codes) expect(readme).toContain(`\`${code}\``);
    const document = (await t.app.inject({ url: "/openapi.json" })).json();
    expect(document.components.schemas.ProblemCode.enum).toEqual(codes);
  });
});
