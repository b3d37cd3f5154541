import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReferenceData } from "../src/domain/reference-data.js";
import { validateBatch } from "../src/services/validate-batch.js";
import { openDatabase } from "../src/store/database.js";
import { createStores } from "../src/store/stores.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { onPostgres } from "./helpers/database.js";
import { KEYS } from "./helpers/fixture.js";
import { untilSessionsWait } from "./helpers/lock-waits.js";
import {
  loadDepthSnapshots,
  qualityFlagsOn,
  depthSnapshot as snapshot,
  withDepth200,
} from "./helpers/public-depth.js";
import { submitAll } from "./helpers/reports.js";

/**
 * `exceeds_public_depth` when new public depth and report writers overlap (PostgreSQL: the
 * embedded database runs one transaction at a time). Each interleaving is forced by a
 * transaction held open on a connection of its own.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const loadSnapshots = (snapshots: unknown[]) => loadDepthSnapshots(t.database.stores, snapshots);
const flagsOn = (date: string) => qualityFlagsOn(t, date);

describe("a snapshot committed while a submission is in flight", () => {
  it.runIf(onPostgres)(
    "waits for the submission, then flags its report (its statement saw no depth)",
    async () => {
      const slow = await submissionInFlight(withDepth200("2025-03-08", 6000));
      try {
        const loading = loadSnapshots([snapshot("2025-03-08", { costToMoveDownUsd: 5000 })]);
        const first = await Promise.race([
          loading.then(() => "recomputed"),
          untilSessionsWait(t.database.db, 1).then(() => "waiting for the submission"),
        ]);
        expect(first).toBe("waiting for the submission");
        await slow.commit();
        await loading;
        expect(await flagsOn("2025-03-08")).toEqual(["exceeds_public_depth"]);
      } finally {
        await slow.close();
      }
    },
  );
});

describe("a report whose row a writer holds while the day's flags are recomputed", () => {
  it.runIf(onPostgres)(
    "is waited for, and flagged when that writer rolls back (it was skipped and kept its flag)",
    async () => {
      await submitAll(t, KEYS.acme, [withDepth200("2025-03-09", 6000)]);
      // A row lock without a lock on the table that conflicts with the load's wait for
      // submissions: a writer that began after it, as an eligibility recomputation may.
      const second = await openDatabase(t.database.config);
      let rollBack: () => void = () => {};
      const decided = new Promise<void>((resolve) => {
        rollBack = resolve;
      });
      let locked: () => void = () => {};
      const holding = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const writer = second.db
        .transaction()
        .execute(async (trx) => {
          await sql`select 1 from reports where organization_id = 'acme' and date = '2025-03-09'
            for update`.execute(trx);
          locked();
          await decided;
          throw new Error("rolled back");
        })
        .catch(() => undefined);
      try {
        await holding;
        const loading = loadSnapshots([snapshot("2025-03-09", { costToMoveDownUsd: 5000 })]);
        const first = await Promise.race([
          loading.then(() => "recomputed"),
          untilSessionsWait(t.database.db, 1).then(() => "waiting for the writer"),
        ]);
        expect(first).toBe("waiting for the writer");
        rollBack();
        await loading;
        expect(await flagsOn("2025-03-09")).toEqual(["exceeds_public_depth"]);
      } finally {
        rollBack();
        await writer;
        await second.close();
      }
    },
  );
});

/**
 * acme's batch of `record`, stored by the service's upsert on a connection of its own in a
 * transaction held open until `commit`: its statement ran before the test goes on.
 */
async function submissionInFlight(record: Record<string, unknown>) {
  const second = await openDatabase(t.database.config);
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let written: () => void = () => {};
  const stored = new Promise<void>((resolve) => {
    written = resolve;
  });
  const transaction = createStores(second.db).transaction(async (tx) => {
    const { version, snapshot } = await tx.references.snapshot();
    const ref = new ReferenceData(snapshot, version);
    const reports = validateBatch(2, { data: [record] }, ref, "2026-01-01");
    const log = {
      id: randomUUID(),
      organizationId: "acme",
      apiKeyId: null,
      schemaVersion: 2 as const,
      receivedAt: new Date(),
    };
    expect(await tx.reports.upsert(log, reports, version)).toEqual({
      createdCount: 1,
      updatedCount: 0,
    });
    written();
    await released;
  });
  await Promise.race([stored, transaction]);
  return {
    async commit() {
      release();
      await transaction;
    },
    async close() {
      release();
      await transaction.catch(() => {});
      await second.close();
    },
  };
}
