import { createHash, randomUUID } from "node:crypto";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { marketMakerCaller } from "../src/domain/caller.js";
import { buildApp } from "../src/http/app.js";
import { startPeriodicJob } from "../src/jobs/periodic.js";
import { submitIdempotently } from "../src/services/idempotency.js";
import { createServices } from "../src/services/index.js";
import { submitReports } from "../src/services/submit-reports.js";
import { openDatabase } from "../src/store/database.js";
import { createStores } from "../src/store/stores.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { checkAnswersOf } from "./helpers/conformance.js";
import { onPostgres } from "./helpers/database.js";
import { KEYS, v1Record, v2Record } from "./helpers/fixture.js";
import { listenOnLoopback, sendRaw } from "./helpers/raw-http.js";
import { dayAfter, problemsOf, rowCounts, submit, type Version } from "./helpers/submission.js";
import { listenWithAnEndpoint } from "./helpers/webhook-jobs.js";

const HOUR = 60 * 60 * 1000;
/** The service's clock, moved by the tests (retention and leases are judged by it). */
let clock = Date.now();
const now = () => new Date(clock);

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ now });
});
afterAll(async () => t?.close());

let day = 0;
/** A batch of records no other test submitted. */
function freshBatch(size = 3): { data: Record<string, unknown>[] } {
  const first = day;
  day += size;
  return {
    data: Array.from({ length: size }, (_, i) =>
      v2Record({ date: dayAfter("2024-01-01", first + i) }),
    ),
  };
}

function keyed(
  key: string,
  body: unknown,
  options: { version?: Version; dryRun?: boolean; apiKey?: string; target?: TestApp } = {},
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { "idempotency-key": key };
  if (options.dryRun) headers["x-dry-run"] = "true";
  return submit(options.target ?? t, options.version ?? 2, body, { headers, key: options.apiKey });
}

const CONFLICT = {
  statusCode: 409,
  error: "Conflict",
  message: "A request with this Idempotency-Key is in progress",
};
const DIFFERENT = {
  statusCode: 422,
  error: "Unprocessable Entity",
  message: "Idempotency-Key was used with a different request",
};

describe("a repeated request with the same Idempotency-Key", () => {
  it("gets the first 201 byte for byte, marked as a replay, and stores nothing more", async () => {
    const key = randomUUID();
    const body = freshBatch();
    const first = await keyed(key, body);
    expect(first.statusCode).toBe(201);
    expect(first.json()).toEqual({ createdCount: 3, updatedCount: 0 });
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    const before = await rowCounts(t);
    for (const _ of [1, 2]) {
      const again = await keyed(key, body);
      expect(again.statusCode).toBe(201);
      expect(again.rawPayload.equals(first.rawPayload)).toBe(true);
      expect(again.headers["content-type"]).toBe(first.headers["content-type"]);
      expect(again.headers["idempotent-replayed"]).toBe("true");
    }
    expect(await rowCounts(t)).toEqual(before);
    // Without the key, the same batch is a new submission: its records are updated.
    const unkeyed = await submit(t, 2, body);
    expect(unkeyed.json()).toEqual({ createdCount: 0, updatedCount: 3 });
  });

  it("replays a dry run's counts, and a dry run and a real submission are different requests", async () => {
    const key = randomUUID();
    const body = freshBatch();
    const dry = await keyed(key, body, { dryRun: true });
    expect(dry.json()).toEqual({ createdCount: 3, updatedCount: 0 });
    const again = await keyed(key, body, { dryRun: true });
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.body).toBe(dry.body);
    const real = await keyed(key, body);
    expect(real.statusCode).toBe(422);
    expect(real.json()).toEqual(DIFFERENT);
    expect(await versionsOf(body)).toBe(0);
  });

  it("is a 422 with a different body, API version or dry-run flag, and changes nothing", async () => {
    const key = randomUUID();
    const body = freshBatch(1);
    expect((await keyed(key, body)).statusCode).toBe(201);
    const before = await rowCounts(t);
    const v1Body = { data: [v1Record({ date: body.data[0]?.date })] };
    const others = [
      keyed(key, { data: [{ ...body.data[0], bidDepth50: 4001 }] }),
      // The same JSON, written differently, is a different body: bytes are compared.
      submit(t, 2, JSON.stringify(body, null, 1), { headers: { "idempotency-key": key } }),
      keyed(key, body, { version: 1 }),
      keyed(key, v1Body, { version: 1 }),
      keyed(key, body, { dryRun: true }),
    ];
    for (const response of await Promise.all(others)) {
      expect(response.statusCode, response.body).toBe(422);
      expect(response.json()).toEqual(DIFFERENT);
    }
    expect(await rowCounts(t)).toEqual(before);
  });

  it("works the same on the v1 endpoint", async () => {
    const key = randomUUID();
    const body = { data: [v1Record({ date: freshBatch(1).data[0]?.date })] };
    const first = await keyed(key, body, { version: 1 });
    expect(first.json()).toEqual({ createdCount: 1, updatedCount: 0 });
    const again = await keyed(key, body, { version: 1 });
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.body).toBe(first.body);
    expect(await versionsOf(body)).toBe(1);
  });

  it("keeps no answer but a 201: a corrected request may reuse the key", async () => {
    const key = randomUUID();
    const body = freshBatch(1);
    const broken = { data: [{ ...body.data[0], bidDepth50: "many" }] };
    expect(problemsOf(await keyed(key, broken))).toEqual([
      { path: "data.0.bidDepth50", message: "Expected number, received string" },
    ]);
    expect(problemsOf(await keyed(key, broken))).toHaveLength(1);
    const corrected = await keyed(key, body);
    expect(corrected.statusCode).toBe(201);
    expect(corrected.headers["idempotent-replayed"]).toBeUndefined();
    expect((await keyed(key, body)).headers["idempotent-replayed"]).toBe("true");
  });
});

describe("the OpenAPI document", () => {
  it("declares the header, the 409 and 422, and the replay header of both submission endpoints", async () => {
    type Operation = {
      parameters: { in: string; name: string }[];
      responses: Record<string, { headers?: Record<string, unknown>; content?: unknown }>;
    };
    const document = (await t.app.inject({ url: "/openapi.json" })).json();
    for (const path of ["/api/v1/report", "/api/v2/report"]) {
      const operation = document.paths[path].post as Operation;
      expect(operation.parameters).toContainEqual(
        expect.objectContaining({ in: "header", name: "idempotency-key" }),
      );
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["409", "422"]));
      expect(Object.keys(operation.responses["201"]?.headers ?? {})).toContain(
        "Idempotent-Replayed",
      );
    }
    expect(document.components.headers["Idempotent-Replayed"].schema).toEqual({
      type: "string",
      const: "true",
    });
  });
});

describe("the key itself", () => {
  it("is refused with a 400 on path Idempotency-Key unless 1 to 255 printable ASCII characters", async () => {
    const before = await rowCounts(t);
    for (const bad of ["", "x".repeat(256), "clé", "tab\there", "nul\u0001"]) {
      expect(problemsOf(await keyed(bad, freshBatch(1)))).toEqual([
        { path: "Idempotency-Key", message: "Expected 1 to 255 printable ASCII characters" },
      ]);
    }
    expect(await rowCounts(t)).toEqual(before);
    for (const good of ["x".repeat(255), "a b ~!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}"]) {
      expect((await keyed(good, freshBatch(1))).statusCode).toBe(201);
    }
  });

  it("is refused with a 400 when sent in two headers, which Node would join into one key", async () => {
    const app = await startTestApp();
    try {
      const port = await listenOnLoopback(app.app);
      const body = JSON.stringify(freshBatch(1));
      const answer = await sendRaw(
        port,
        "POST /api/v2/report HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
          `Authorization: ${KEYS.acme}\r\nContent-Type: application/json\r\n` +
          "Idempotency-Key: first\r\nIdempotency-Key: second\r\n" +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body).message).toEqual([
        { path: "Idempotency-Key", message: "Expected one Idempotency-Key header, received 2" },
      ]);
      expect((await rowCounts(app)).versions).toBe(0);
    } finally {
      await app.close();
    }
  });

  it("belongs to the organization: another's same key is independent", async () => {
    const key = randomUUID();
    const body = freshBatch(1);
    const acme = await keyed(key, body);
    const globex = await keyed(key, body, { apiKey: KEYS.globex });
    expect(globex.statusCode).toBe(201);
    expect(globex.headers["idempotent-replayed"]).toBeUndefined();
    expect(globex.json()).toEqual({ createdCount: 1, updatedCount: 0 });
    // A different body under Globex's key does not disturb Acme's.
    expect((await keyed(key, freshBatch(1), { apiKey: KEYS.globex })).statusCode).toBe(422);
    expect((await keyed(key, body)).body).toBe(acme.body);
  });

  it("is kept 24 hours after its answer, then the request runs anew", async () => {
    const key = randomUUID();
    const body = freshBatch(2);
    expect((await keyed(key, body)).json()).toEqual({ createdCount: 2, updatedCount: 0 });
    clock += 24 * HOUR - 1000;
    expect((await keyed(key, body)).headers["idempotent-replayed"]).toBe("true");
    clock += 2000;
    const before = await rowCounts(t);
    const anew = await keyed(key, body);
    expect(anew.headers["idempotent-replayed"]).toBeUndefined();
    expect(anew.json()).toEqual({ createdCount: 0, updatedCount: 2 });
    expect((await rowCounts(t)).versions).toBe(before.versions + 2);
    clock += 25 * HOUR;
    expect((await keyed(key, freshBatch(1))).statusCode).toBe(201);
  });
});

/** Versions stored for the dates of a batch (one per record per accepted submission). */
async function versionsOf(body: { data: Record<string, unknown>[] }): Promise<number> {
  const dates = body.data.map((r) => String(r.date));
  const result = await sql<{ n: number }>`
    select count(*)::int as n from report_versions v join reports r on r.id = v.report_id
    where r.date = any(${dates}::date[])`.execute(t.database.db);
  return result.rows[0]?.n ?? 0;
}

function expectOneApplied(responses: LightMyRequestResponse[]): void {
  const fresh = responses.filter((r) => r.statusCode === 201 && !r.headers["idempotent-replayed"]);
  expect(fresh).toHaveLength(1);
  for (const r of responses) {
    if (r.statusCode === 409) {
      expect(r.json()).toEqual(CONFLICT);
      // Logged as a rejected submission of its own (CONTRACT section 5: every answer).
      expect(r.headers["x-submission-id"]).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.headers["x-submission-id"]).not.toBe(fresh[0]?.headers["x-submission-id"]);
    } else {
      expect(r.statusCode, r.body).toBe(201);
      expect(r.body).toBe(fresh[0]?.body);
      // A replay names the submission that was kept.
      expect(r.headers["x-submission-id"]).toBe(fresh[0]?.headers["x-submission-id"]);
    }
  }
}

describe("concurrent requests with one key", () => {
  it("20 at once: one 201, the others 409 or its replay, one stored batch", async () => {
    const key = randomUUID();
    const body = freshBatch(5);
    const responses = await Promise.all(Array.from({ length: 20 }, () => keyed(key, body)));
    expectOneApplied(responses);
    expect(await versionsOf(body)).toBe(5);
  });

  it("a claim that never answers (a crashed process) is a 409 for 60 s, then expires", async () => {
    const key = randomUUID();
    const body = freshBatch(1);
    const payload = JSON.stringify(body);
    const claim = {
      organizationId: "acme",
      key,
      claim: randomUUID(),
      requestHash: requestHashOf(2, false, payload),
    };
    expect(
      await t.database.stores.idempotency.claim(claim, now(), new Date(clock + 60_000)),
    ).toEqual({ claimed: true });
    const busy = await keyed(key, body);
    expect(busy.statusCode).toBe(409);
    expect(busy.json()).toEqual(CONFLICT);
    expect((await keyed(key, freshBatch(1))).json()).toEqual(DIFFERENT);
    clock += 59_000;
    expect((await keyed(key, body)).statusCode).toBe(409);
    clock += 1000;
    const taken = await keyed(key, body);
    expect(taken.statusCode).toBe(201);
    expect(taken.headers["idempotent-replayed"]).toBeUndefined();
    expect(await versionsOf(body)).toBe(1);
    // The crashed request, had it come back, could no longer store its answer (nor its batch).
    const late = { statusCode: 201, body: "{}", headers: {} };
    expect(await t.database.stores.idempotency.complete(claim, late, now())).toBe(false);
    expect((await keyed(key, body)).body).toBe(taken.body);
  });
});

describe("the log of a 409 and a 422", () => {
  it("logs both; only the 422 raises submission.rejected: a retry answered 409 rejects nothing", async () => {
    await listenWithAnEndpoint(t.database.db); // events are recorded only then
    const key = randomUUID();
    const body = freshBatch(1);
    const claim = {
      organizationId: "acme",
      key,
      claim: randomUUID(),
      requestHash: requestHashOf(2, false, JSON.stringify(body)),
    };
    await t.database.stores.idempotency.claim(claim, now(), new Date(clock + 60_000));
    const busy = await keyed(key, body);
    const reused = await keyed(key, freshBatch(1));
    expect([busy.statusCode, reused.statusCode]).toEqual([409, 422]);
    const ids = [busy, reused].map((r) => String(r.headers["x-submission-id"]));
    const logged = await sql<{ id: string; events: number }>`
      select s.id::text, (select count(*)::int from webhook_events e
        where e.type = 'submission.rejected' and e.dedup_key = s.id::text) as events
      from submissions s where s.id::text = any(${ids}) order by s.submitted_at, s.id`.execute(
      t.database.db,
    );
    expect(Object.fromEntries(logged.rows.map((r) => [r.id, r.events]))).toEqual({
      [ids[0] as string]: 0,
      [ids[1] as string]: 1,
    });
  });
});

describe("a request that lost its claim", () => {
  it("cannot store its batch: it is rolled back and answered 409, the new holder stores it once", async () => {
    const key = randomUUID();
    const body = freshBatch(2);
    const caller = marketMakerCaller("acme");
    const request = {
      key,
      requestHash: requestHashOf(2, false, JSON.stringify(body)),
      render: () => ({ statusCode: 201, body: "{}", headers: {} }),
    };
    const stores = t.database.stores;
    const slow = submitIdempotently({ stores, now }, caller, request, async (writer) => {
      // Past this request's lease, another takes the key over before the batch is stored.
      const later = new Date(clock + 61_000);
      const other = { organizationId: "acme", key, claim: randomUUID(), requestHash: "other" };
      expect(await stores.idempotency.claim(other, later, new Date(clock + 120_000))).toEqual({
        claimed: true,
      });
      const submission = { version: 2 as const, body, dryRun: false };
      const deps = { reports: writer, referenceData: t.services.referenceData, now };
      return submitReports(deps, caller, submission);
    });
    await expect(slow).rejects.toThrow(CONFLICT.message);
    expect(await versionsOf(body)).toBe(0);
  });
});

/** What makes two requests the same, computed here independently of src/. */
function requestHashOf(version: Version, dryRun: boolean, payload: string): string {
  const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
  return sha256(`v${version}\ndry-run=${dryRun}\n${sha256(payload)}`);
}

describe("expired keys", () => {
  it("are purged by serve's job until it stops; a failed run is reported, the next one runs", async () => {
    let runs = 0;
    const errors: unknown[] = [];
    let ranTwice: () => void = () => undefined;
    const twice = new Promise<void>((resolve) => {
      ranTwice = resolve;
    });
    const job = startPeriodicJob({
      run: async () => {
        runs += 1;
        if (runs === 2) ranTwice();
        if (runs === 1) throw new Error("database unavailable");
        return 0;
      },
      intervalMs: 1,
      onError: (error) => errors.push(error),
    });
    await twice;
    await job.stop();
    const stoppedAt = runs;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(runs).toBe(stoppedAt);
    expect(errors).toHaveLength(1);
  });

  it("are purged in batches an hour after they expired; live and recently expired ones stay", async () => {
    const live = randomUUID();
    await keyed(live, freshBatch(1));
    const at = now();
    const insert = (prefix: string, count: number, expiresAt: Date) =>
      sql`insert into idempotency_keys (organization_id, key, request_hash, claim, created_at, expires_at)
        select 'acme', ${prefix} || g, 'h', gen_random_uuid(), ${at}, ${expiresAt}
        from generate_series(1, ${count}::int) g`.execute(t.database.db);
    await insert("old-", 1200, new Date(clock - 2 * HOUR));
    await insert("recent-", 3, new Date(clock - 60_000));
    expect(await t.services.purgeIdempotencyKeys()).toBeGreaterThanOrEqual(1200);
    const left = await sql<{ key: string }>`select key from idempotency_keys
      where key like 'old-%' or key like 'recent-%' or key = ${live} order by key`.execute(
      t.database.db,
    );
    expect(left.rows.map((r) => r.key)).toEqual([live, "recent-1", "recent-2", "recent-3"].sort());
  });
});

describe("two service instances on one database", () => {
  let second: { app: FastifyInstance; close(): Promise<void> };
  beforeAll(async () => {
    second = await secondInstance(t);
  });
  afterAll(async () => second?.close());

  const via = (app: FastifyInstance, key: string, body: unknown) =>
    app.inject({
      method: "POST",
      url: "/api/v2/report",
      headers: {
        authorization: KEYS.acme,
        "content-type": "application/json",
        "idempotency-key": key,
      },
      payload: JSON.stringify(body),
    });

  it("replay on either instance what the other answered, and 422 a different request", async () => {
    const key = randomUUID();
    const body = freshBatch(2);
    const first = await via(second.app, key, body);
    expect(first.statusCode).toBe(201);
    const replay = await keyed(key, body);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.rawPayload.equals(first.rawPayload)).toBe(true);
    expect((await via(second.app, key, freshBatch(1))).json()).toEqual(DIFFERENT);
  });

  it("20 requests split over both: one 201, one stored batch", async () => {
    const key = randomUUID();
    const body = freshBatch(4);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? keyed(key, body) : via(second.app, key, body))),
    );
    expectOneApplied(responses);
    expect(await versionsOf(body)).toBe(4);
  });
});

/**
 * Another app over the same database, as a second `serve` process would be: on PostgreSQL its
 * own connection pool; PGlite is single-process, so it shares the handle.
 */
async function secondInstance(first: TestApp) {
  const database = onPostgres ? await openDatabase(first.database.config) : undefined;
  const stores = database ? createStores(database.db) : first.database.stores;
  const config = loadConfig({ REFERENCE_DATA_CHECK_MS: "0" });
  const services = createServices(stores, { referenceDataCheckMs: 0, now });
  const app = await buildApp({ services, http: config.http, logger: false });
  const conformance = checkAnswersOf(app);
  return {
    app,
    async close() {
      await app.close();
      await database?.close();
      expect(conformance.violations()).toEqual([]);
    },
  };
}
