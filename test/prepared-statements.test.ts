import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { METRICS, type Report } from "../src/domain/report.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { onPostgres } from "./helpers/database.js";
import { v2Record, v2Records } from "./helpers/fixture.js";
import { dayAfter, rowCounts, submitOk } from "./helpers/submission.js";

// README "PgBouncer" and "Performance": the batch upsert is prepared once per connection; a
// named statement lost behind a transaction pooler turns them off and the work runs again
// unnamed, with nothing lost and nothing stored twice.

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

type Named = { name: string; keyed: boolean; generic_plans: number; custom_plans: number };

/** The named upserts of the pool's one connection (pg_prepared_statements is per session). */
async function namedUpserts(app: TestApp): Promise<Named[]> {
  const result = await sql<Named>`
    select name, statement like '%idempotency_keys%' as keyed, generic_plans::int,
      custom_plans::int
    from pg_prepared_statements
    where name like 'tr\\_%' and statement like '%insert into reports as r%'`.execute(
    app.database.db,
  );
  return result.rows;
}

function lostCodes(app: TestApp): string[] {
  const codes: string[] = [];
  app.database.preparedStatements.onLost((error) =>
    codes.push(String((error as Error & { code: string }).code)),
  );
  return codes;
}

describe.runIf(onPostgres)("the batch upsert as a named prepared statement", () => {
  it("is prepared once per connection and reused; full batches run its generic plan", async () => {
    t = await startTestApp({ pool: { size: 1 } });
    expect(t.database.preparedStatements.inUse()).toBe(true);
    for (let n = 1; n <= 8; n++) await submitOk(t, 2, v2Records(300));
    const [named, ...more] = await namedUpserts(t);
    expect(more).toEqual([]);
    // A plan for each of the first five runs; then, for batches this size, the generic plan
    // PostgreSQL keeps (a plan made for the run's own arrays would cost more than it).
    expect(named).toMatchObject({ keyed: false, custom_plans: 5, generic_plans: 3 });
    expect(await rowCounts(t)).toEqual({ reports: 300, versions: 2400 });
  });

  it("with an Idempotency-Key, its completing upsert is prepared too", async () => {
    t = await startTestApp({ pool: { size: 1 } });
    await submitOk(t, 2, v2Records(2), { "idempotency-key": "prepared-1" });
    await submitOk(t, 2, v2Records(3), { "idempotency-key": "prepared-2" });
    const named = await namedUpserts(t);
    expect(named.map((n) => n.keyed)).toEqual([true]);
    expect(await rowCounts(t)).toEqual({ reports: 3, versions: 5 });
  });

  it("DB_PREPARED_STATEMENTS=false sends every statement unnamed", async () => {
    t = await startTestApp({ pool: { size: 1, preparedStatements: false } });
    expect(t.database.preparedStatements.inUse()).toBe(false);
    await submitOk(t, 2, v2Records(3));
    await submitOk(t, 2, v2Records(3));
    expect(await namedUpserts(t)).toEqual([]);
  });

  it("a statement the connection lost is run again unnamed: every record stored once", async () => {
    t = await startTestApp({ pool: { size: 1 } });
    const codes = lostCodes(t);
    await submitOk(t, 2, v2Records(2));
    // What a transaction pooler does when the next transaction lands on another server
    // connection: the driver believes the statement parsed, the server has no such name.
    await sql`deallocate all`.execute(t.database.db);
    const counts = await submitOk(t, 2, [
      ...v2Records(2, { bidDepth50: 7777 }),
      v2Record({ date: "2025-06-01" }),
    ]);
    expect(counts).toEqual({ createdCount: 1, updatedCount: 2 });
    expect(codes).toEqual(["26000"]);
    expect(t.database.preparedStatements.inUse()).toBe(false);
    expect(await rowCounts(t)).toEqual({ reports: 3, versions: 5 });
    // Later batches go unnamed, and the keyed path too.
    await submitOk(t, 2, [v2Record({ date: "2025-06-02" })], { "idempotency-key": "after-loss" });
    expect(await namedUpserts(t)).toEqual([]);
    expect(await rowCounts(t)).toEqual({ reports: 4, versions: 6 });
    expect(codes).toHaveLength(1);
  });

  it("a name the server connection already holds (another client of a pooler's): run unnamed", async () => {
    t = await startTestApp({ pool: { size: 1 } });
    await submitOk(t, 2, v2Records(1));
    const [named] = await namedUpserts(t);
    await t.close();
    // A new pool, whose connection another client has already given the statement's name.
    t = await startTestApp({ pool: { size: 1 } });
    const codes = lostCodes(t);
    await sql`${sql.raw(`prepare ${named?.name} as select 1`)}`.execute(t.database.db);
    expect(await submitOk(t, 2, v2Records(2))).toEqual({ createdCount: 2, updatedCount: 0 });
    expect(codes).toEqual(["42P05"]);
    expect(t.database.preparedStatements.inUse()).toBe(false);
    expect(await rowCounts(t)).toEqual({ reports: 2, versions: 2 });
  });

  it("lost inside a transaction, the whole transaction runs again", async () => {
    t = await startTestApp({ pool: { size: 1 } });
    const codes = lostCodes(t);
    await submitOk(t, 2, v2Records(1));
    await sql`deallocate all`.execute(t.database.db);
    const { stores } = t.database;
    const version = await stores.references.version();
    let attempts = 0;
    const counts = await stores.transaction(async (tx) => {
      attempts++;
      // Written before the failure: kept once, by the attempt that commits.
      await tx.reports.logDryRun(logOf(), 0, { createdCount: 0, updatedCount: 0 });
      return tx.reports.upsert(logOf(), [reportOn("2025-07-01")], version);
    });
    expect(attempts).toBe(2);
    expect(codes).toEqual(["26000"]);
    expect(counts).toEqual({ createdCount: 1, updatedCount: 0 });
    const dryRuns = await sql<{ n: number }>`
      select count(*)::int as n from submissions where dry_run`.execute(t.database.db);
    expect(dryRuns.rows[0]?.n).toBe(1);
    expect(await rowCounts(t)).toEqual({ reports: 2, versions: 2 });
  });
});

describe.skipIf(onPostgres)("on the embedded database", () => {
  it("statements go unnamed (PGlite keeps its own statement cache)", async () => {
    t = await startTestApp();
    expect(t.database.preparedStatements.inUse()).toBe(false);
    await submitOk(t, 2, [v2Record({ date: dayAfter("2025-01-01", 1) })]);
  });
});

const logOf = () => ({
  id: randomUUID(),
  organizationId: "acme",
  apiKeyId: null,
  schemaVersion: 2 as const,
  receivedAt: new Date(),
});

function reportOn(date: string): Report {
  const record = v2Record({ date });
  return {
    date,
    exchangeId: String(record.exchangeId),
    baseCoinId: String(record.baseCoinId),
    quoteKey: String(record.quoteCoinId),
    instrumentType: "spot",
    quoteCoinId: String(record.quoteCoinId),
    quoteCoinSymbol: null,
    type: "project",
    schemaVersion: 2,
    metrics: Object.fromEntries(METRICS.map((m) => [m, record[m] ?? null])) as Report["metrics"],
    eligibilityReason: null,
  };
}
