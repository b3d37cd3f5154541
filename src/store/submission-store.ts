import { type Kysely, sql } from "kysely";
import type { ProblemCode } from "../domain/problem-codes.js";
import type { SchemaVersion } from "../domain/report.js";
import { textArrayLiteral } from "./pg-arrays.js";
import type { Tables } from "./tables.js";

/** A rejected submission as logged: its problems already capped, their exact count beside. */
export type RejectedSubmission = {
  id: string;
  organizationId: string;
  apiKeyId: string | null;
  schemaVersion: SchemaVersion;
  dryRun: boolean;
  receivedAt: Date;
  recordCount: number;
  idempotencyKey: string | null;
  problemCount: number;
  problems: { path: string | null; message: string; code: ProblemCode }[];
  /** Every problem (not only the stored ones) counted by code and field. */
  counts: { code: ProblemCode; field: string; n: number }[];
};

export type SubmissionRow = {
  id: string;
  receivedAt: Date;
  apiVersion: SchemaVersion;
  dryRun: boolean;
  status: "accepted" | "rejected";
  recordCount: number;
  createdCount: number;
  updatedCount: number;
  problemCount: number;
  keyPrefix: string | null;
  idempotencyKey: string | null;
};

export type SubmissionFilter = {
  organizationId: string;
  /** Received at or after. */
  from?: Date;
  /** Received before. */
  before?: Date;
  status?: "accepted" | "rejected";
  /** Only submissions after this one of the organization's (its id) in the log's order. */
  olderThan?: string;
  limit: number;
  offset: number;
};

/** The submission log (CONTRACT section 5); accepted ones are written by the batch upsert. */
export function createSubmissionStore(db: Kysely<Tables>) {
  const filtered = (filter: SubmissionFilter) => {
    let query = db
      .selectFrom("submissions as s")
      .where("s.organization_id", "=", filter.organizationId);
    if (filter.from !== undefined) query = query.where("s.submitted_at", ">=", filter.from);
    if (filter.before !== undefined) query = query.where("s.submitted_at", "<", filter.before);
    if (filter.status !== undefined) query = query.where("s.status", "=", filter.status);
    if (filter.olderThan !== undefined) {
      const cursor = sql`(select c.submitted_at, c.id from submissions c
        where c.organization_id = ${filter.organizationId} and c.id = ${filter.olderThan}::uuid)`;
      query = query.where(sql<boolean>`(s.submitted_at, s.id) < ${cursor}`);
    }
    return query;
  };
  const rows = (filter: SubmissionFilter) =>
    filtered(filter)
      .leftJoin("api_keys as k", "k.id", "s.api_key_id")
      .select([
        "s.id",
        "s.submitted_at as receivedAt",
        "s.schema_version as apiVersion",
        "s.dry_run as dryRun",
        "s.status",
        "s.record_count as recordCount",
        "s.created_count as createdCount",
        "s.updated_count as updatedCount",
        "s.problem_count as problemCount",
        "k.prefix as keyPrefix",
        "s.idempotency_key as idempotencyKey",
      ]);
  return {
    /**
     * Logs rejected submissions, each with its stored problems (one JSON array) and its
     * problem counts, in one statement (the caller's transaction also records their webhook
     * events): a burst of rejections costs one round trip and, with the transaction, one commit.
     */
    async recordRejected(entries: readonly RejectedSubmission[]): Promise<void> {
      if (entries.length === 0) return;
      const column = <T>(pick: (e: RejectedSubmission) => T) => entries.map(pick);
      const counts = entries.flatMap((e) => e.counts.map((c) => ({ id: e.id, ...c })));
      await sql`
        with submission as (
          insert into submissions (id, organization_id, api_key_id, schema_version, dry_run,
            record_count, created_count, updated_count, submitted_at, status, problem_count,
            idempotency_key, problems)
          select e.id, e.organization_id, e.api_key_id, e.schema_version, e.dry_run,
            e.record_count, 0, 0, e.received_at, 'rejected', e.problem_count,
            e.idempotency_key, e.problems
          from unnest(
            ${textArrayLiteral(column((e) => e.id))}::uuid[],
            ${textArrayLiteral(column((e) => e.organizationId))}::text[],
            ${textArrayLiteral(column((e) => e.apiKeyId))}::uuid[],
            ${textArrayLiteral(column((e) => String(e.schemaVersion)))}::smallint[],
            ${textArrayLiteral(column((e) => String(e.dryRun)))}::boolean[],
            ${textArrayLiteral(column((e) => String(e.recordCount)))}::int[],
            ${textArrayLiteral(column((e) => e.receivedAt.toISOString()))}::timestamptz[],
            ${textArrayLiteral(column((e) => String(e.problemCount)))}::int[],
            ${textArrayLiteral(column((e) => e.idempotencyKey))}::text[],
            ${textArrayLiteral(column((e) => JSON.stringify(e.problems)))}::json[])
            as e(id, organization_id, api_key_id, schema_version, dry_run, record_count,
              received_at, problem_count, idempotency_key, problems)
          returning id
        ),
        counts as (
          insert into submission_problem_counts (submission_id, code, field, n)
          select s.id, c.code, c.field, c.n
          from unnest(
            ${textArrayLiteral(counts.map((c) => c.id))}::uuid[],
            ${textArrayLiteral(counts.map((c) => c.code))}::text[],
            ${textArrayLiteral(counts.map((c) => c.field))}::text[],
            ${textArrayLiteral(counts.map((c) => String(c.n)))}::int[]) as c(id, code, field, n)
          join submission s on s.id = c.id
        )
        select 1`.execute(db);
    },

    /** One page of an organization's log, newest first, and how many match in all. */
    async list(filter: SubmissionFilter): Promise<{ totalCount: number; items: SubmissionRow[] }> {
      const total = await filtered(filter)
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirst();
      const items = await rows(filter)
        .orderBy("s.submitted_at", "desc")
        .orderBy("s.id", "desc")
        .limit(filter.limit)
        .offset(filter.offset)
        .execute();
      return { totalCount: Number(total?.n ?? 0), items: items.map(rowOf) };
    },

    /** Whether the organization has a submission with this id (lower-case). */
    async has(organizationId: string, id: string): Promise<boolean> {
      const row = await db
        .selectFrom("submissions")
        .select("id")
        .where("organization_id", "=", organizationId)
        .where("id", "=", id)
        .executeTakeFirst();
      return row !== undefined;
    },

    /** One submission of the organization with its stored problems; undefined if none. */
    async get(organizationId: string, id: string) {
      const row = await rows({ organizationId, limit: 1, offset: 0 })
        .select("s.problems")
        .where("s.id", "=", id)
        .executeTakeFirst();
      if (row === undefined) return undefined;
      const { problems, ...item } = row;
      return { ...rowOf(item), problems: parsedJson(problems) ?? [] };
    },

    /**
     * Deletes up to `limit` log rows received before `before` (their problem counts cascade), oldest
     * first; returns how many. Small batches: each is a short transaction beside ingest.
     * Report versions keep their submission id (no foreign key): reports are never purged.
     */
    async purgeBefore(before: Date, limit: number): Promise<number> {
      const result = await sql<{ n: number }>`
        with gone as (
          delete from submissions where id in (
            select id from submissions where submitted_at < ${before}
            order by submitted_at limit ${limit})
          returning 1
        )
        select count(*)::int as n from gone`.execute(db);
      return result.rows[0]?.n ?? 0;
    },
  };
}

export type SubmissionStore = ReturnType<typeof createSubmissionStore>;

/** A `json` column as read: the drivers parse it, but a text value is parsed here. */
function parsedJson(value: unknown): StoredProblem[] | undefined {
  if (value === null || value === undefined) return undefined;
  return (typeof value === "string" ? JSON.parse(value) : value) as StoredProblem[];
}

type StoredProblem = RejectedSubmission["problems"][number];

function rowOf<R extends { apiVersion: number; keyPrefix: string | null }>(row: R) {
  return {
    ...row,
    apiVersion: row.apiVersion as SchemaVersion,
    // Keys chosen by hand (fixture keys) keep no prefix (migration 005).
    keyPrefix: row.keyPrefix === "" ? null : row.keyPrefix,
  };
}
