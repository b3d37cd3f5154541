import { sql } from "kysely";
import { expect } from "vitest";
import { KEYS, v2Record } from "./fixture.js";
import type { World } from "./scorecard-world.js";

/**
 * Acme sends a batch of three with two bad records at 2025-03-08 10:00 UTC (after the
 * scorecard world's last submission) under an Idempotency-Key; returns its submission id.
 */
export async function rejectedBatch(world: World): Promise<string> {
  world.setClock(new Date("2025-03-08T10:00:00Z"));
  const response = await world.t.request({
    method: "POST",
    url: "/api/v2/report",
    key: KEYS.acme,
    headers: { "idempotency-key": "nightly-2025-03-07" },
    payload: {
      data: [
        v2Record({ date: "2025-02-30" }),
        v2Record({ date: "2025-03-07" }),
        v2Record({ date: "2025-03-07", baseCoinId: "chainlnk" }),
      ],
    },
  });
  expect(response.statusCode, response.body).toBe(400);
  return String(response.headers["x-submission-id"]);
}

/**
 * Gives a logged submission another id (its problems follow), so that a screenshot showing
 * the id is the same at every run. The tables' foreign keys do not cascade updates: copy,
 * move the children, delete.
 */
export async function renameSubmission(world: World, from: string, to: string): Promise<void> {
  await sql`insert into submissions
    (id, organization_id, api_key_id, schema_version, dry_run, record_count, created_count,
     updated_count, submitted_at, status, problem_count, idempotency_key, problems)
    select ${to}::uuid, organization_id, api_key_id, schema_version, dry_run, record_count,
     created_count, updated_count, submitted_at, status, problem_count, idempotency_key, problems
    from submissions where id = ${from}::uuid`.execute(world.t.database.db);
  await sql`update submission_problem_counts set submission_id = ${to}::uuid
    where submission_id = ${from}::uuid`.execute(world.t.database.db);
  await sql`delete from submissions where id = ${from}::uuid`.execute(world.t.database.db);
}
