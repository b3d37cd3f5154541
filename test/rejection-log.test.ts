import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRejectionLog } from "../src/services/rejection-log.js";
import type { RejectedSubmission } from "../src/store/submission-store.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Record } from "./helpers/fixture.js";
import { problemsOf, submit } from "./helpers/submission.js";
import { listenWithAnEndpoint } from "./helpers/webhook-jobs.js";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const detailOf = (id: string) =>
  t.request({ method: "GET", url: `/api/v1/submissions/${id}`, key: KEYS.acme });

describe("rejected submissions arriving together", () => {
  it("logs each with its own problems and its own event, however their writes were grouped", async () => {
    await listenWithAnEndpoint(t.database.db); // events are recorded only then
    const bodies = Array.from({ length: 8 }, (_, i) => ({
      data: Array.from({ length: i + 1 }, () => v2Record({ baseCoinId: `no-such-coin-${i}` })),
    }));
    const answers = await Promise.all(
      bodies.map((body, i) =>
        submit(t, 2, body, { headers: i % 2 ? { "x-dry-run": "true" } : {} }),
      ),
    );
    const ids = answers.map((a) => String(a.headers["x-submission-id"]));
    expect(new Set(ids).size).toBe(8);
    for (const [i, answer] of answers.entries()) {
      expect(answer.statusCode).toBe(400);
      const detail = (await detailOf(ids[i] ?? "")).json();
      expect(detail).toMatchObject({ status: "rejected", recordCount: i + 1, dryRun: i % 2 === 1 });
      expect(detail.problems.map((p: { path: string; message: string }) => p)).toEqual(
        problemsOf(answer).map((p) => ({ ...p, code: expect.any(String) })),
      );
      expect(detail.problemCount).toBe(i + 1);
    }
    const events = await sql<{ dedup_key: string }>`
      select dedup_key from webhook_events
      where type = 'submission.rejected' and dedup_key = any(${ids})
      order by dedup_key`.execute(t.database.db);
    expect(events.rows.map((r) => r.dedup_key)).toEqual(ids.filter((_, i) => i % 2 === 0).sort());
  });

  it("keeps the others' record when one of a group cannot be written", async () => {
    const log = createRejectionLog({ stores: t.database.stores, now: () => new Date() });
    const entry = (organizationId: string): RejectedSubmission => ({
      id: crypto.randomUUID(),
      organizationId,
      apiKeyId: null,
      schemaVersion: 2,
      dryRun: true,
      receivedAt: new Date("2025-06-15T12:00:00Z"),
      recordCount: 1,
      idempotencyKey: null,
      problemCount: 1,
      problems: [{ path: "data.0.date", message: "Required", code: "required" }],
      counts: [{ code: "required", field: "date", n: 1 }],
    });
    const entries = ["acme", "no-such-organization", "acme", "acme"].map(entry);
    const outcomes = await Promise.allSettled(
      entries.map((e) => log.record({ entry: e, event: undefined })),
    );
    expect(outcomes.map((o) => o.status)).toEqual([
      "fulfilled",
      "rejected",
      "fulfilled",
      "fulfilled",
    ]);
    const kept = await sql<{ id: string }>`
      select id from submissions where id = any(${entries.map((e) => e.id)}::uuid[])`.execute(
      t.database.db,
    );
    expect(kept.rows.map((r) => r.id).sort()).toEqual(
      [entries[0], entries[2], entries[3]].map((e) => e?.id).sort(),
    );
    const detail = (await detailOf(entries[2]?.id ?? "")).json();
    expect(detail.problems).toEqual([
      { path: "data.0.date", message: "Required", code: "required" },
    ]);
  });
});
