import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { METRICS, type Report } from "../src/domain/report.js";
import { loadFixture } from "../src/services/fixtures.js";
import { createReferenceStore } from "../src/store/reference-store.js";
import { freshDatabase, onPostgres, type TestDatabase } from "./helpers/database.js";
import { baseFixture } from "./helpers/fixture.js";

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase();
  await loadFixture(database.stores, baseFixture(), new Date());
});
afterAll(async () => database?.close());

const report: Report = {
  date: "2025-02-03",
  exchangeId: "kraken",
  baseCoinId: "aave",
  quoteKey: "usd-coin",
  instrumentType: "spot",
  quoteCoinId: "usd-coin",
  quoteCoinSymbol: null,
  type: "project",
  schemaVersion: 2,
  metrics: Object.fromEntries(METRICS.map((m) => [m, 1])) as Report["metrics"],
  eligibilityReason: "pair_not_found",
};
const log = () => ({
  id: crypto.randomUUID(),
  organizationId: "acme",
  apiKeyId: null,
  schemaVersion: 2 as const,
  receivedAt: new Date(),
  idempotencyKey: "batch-1",
});
const storedCounts = async () =>
  (
    await sql<{ reports: number; versions: number; submissions: number }>`
      select (select count(*) from reports)::int as reports,
        (select count(*) from report_versions)::int as versions,
        (select count(*) from submissions)::int as submissions`.execute(database.db)
  ).rows[0];
const answer = { bodyAround: ['{"c":', ',"u":', "}"] as [string, string, string], headers: {} };

describe("a batch stored with its Idempotency-Key's answer in one statement", () => {
  it("stores nothing for a claim another request took over, and the answer for the holder", async () => {
    const { idempotency, reports } = database.stores;
    const { version } = await createReferenceStore(database.db).snapshot();
    const claim = (token: string, at: Date) =>
      idempotency.claim(
        { organizationId: "acme", key: "batch-1", claim: token, requestHash: "h" },
        at,
        new Date(at.getTime() + 60_000),
      );
    const first = crypto.randomUUID();
    const second = crypto.randomUUID();
    const now = new Date();
    expect(await claim(first, new Date(now.getTime() - 120_000))).toEqual({ claimed: true });
    // The first request's lease ran out; the second took the key over.
    expect(await claim(second, now)).toEqual({ claimed: true });
    const keepUntil = new Date(now.getTime() + 86_400_000);
    const before = await storedCounts();
    const late = await reports.upsertCompleting(
      {
        key: "batch-1",
        claim: first,
        keepUntil,
        ...answer,
      },
      log(),
      [report],
      version,
    );
    expect(late).toEqual({ counts: undefined, held: false, keptBody: null });
    expect(await storedCounts()).toEqual(before);

    const holder = await reports.upsertCompleting(
      {
        key: "batch-1",
        claim: second,
        keepUntil,
        ...answer,
      },
      log(),
      [report],
      version,
    );
    expect(holder).toEqual({
      counts: { createdCount: 1, updatedCount: 0 },
      held: true,
      keptBody: '{"c":1,"u":0}',
    });
    const kept = await claim(crypto.randomUUID(), now);
    expect(kept).toEqual({
      claimed: false,
      held: { requestHash: "h", response: { statusCode: 201, body: '{"c":1,"u":0}', headers: {} } },
    });
  });
});

describe("giving a key up", () => {
  it("keeps an answer the claim already kept, so that a request failing after its commit replays", async () => {
    const { idempotency } = database.stores;
    const now = new Date();
    const held = { organizationId: "acme", key: "batch-2", claim: crypto.randomUUID() };
    const claim = (token: string) =>
      idempotency.claim({ ...held, claim: token, requestHash: "h" }, now, new Date(+now + 60_000));
    expect(await claim(held.claim)).toEqual({ claimed: true });
    const response = { statusCode: 201, body: '{"c":1,"u":0}', headers: {} };
    expect(await idempotency.complete(held, response, new Date(+now + 86_400_000))).toBe(true);
    await idempotency.release(held);
    expect(await claim(crypto.randomUUID())).toEqual({
      claimed: false,
      held: { requestHash: "h", response },
    });
  });

  it("frees a key whose claim kept no answer", async () => {
    const { idempotency } = database.stores;
    const now = new Date();
    const held = { organizationId: "acme", key: "batch-3", claim: crypto.randomUUID() };
    const claim = (token: string) =>
      idempotency.claim({ ...held, claim: token, requestHash: "h" }, now, new Date(+now + 60_000));
    expect(await claim(held.claim)).toEqual({ claimed: true });
    await idempotency.release(held);
    expect(await claim(crypto.randomUUID())).toEqual({ claimed: true });
  });
});

describe.runIf(onPostgres)("a claim while the key's batch is being stored (PostgreSQL)", () => {
  it("is answered from the live row at once, not after waiting on the batch's row lock", async () => {
    const { idempotency } = database.stores;
    const key = { organizationId: "acme", key: "in-flight", requestHash: "h" };
    const now = new Date();
    const lease = new Date(now.getTime() + 60_000);
    const first = { ...key, claim: crypto.randomUUID() };
    expect(await idempotency.claim(first, now, lease)).toEqual({ claimed: true });
    // The batch's statement holds the key's row (report-upsert-completion) for its whole run.
    let release: () => void = () => {};
    const holding = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked: () => void = () => {};
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const batch = database.db.transaction().execute(async (tx) => {
      await sql`select 1 from idempotency_keys where key = 'in-flight' for update`.execute(tx);
      locked();
      await holding;
    });
    await isLocked;
    try {
      const retry = idempotency.claim({ ...key, claim: crypto.randomUUID() }, now, lease);
      const waited = waitForLockWaiter().then(() => "waited on the row lock" as const);
      const outcome = await Promise.race([retry, waited]);
      expect(outcome).toEqual({ claimed: false, held: { requestHash: "h", response: undefined } });
    } finally {
      release();
      await batch;
    }
  });
});

/** Resolves once some session waits for a lock on idempotency_keys. */
async function waitForLockWaiter(): Promise<void> {
  for (;;) {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid
      where not l.granted and a.query ilike '%idempotency_keys%'`.execute(database.db);
    if ((rows[0]?.n ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
