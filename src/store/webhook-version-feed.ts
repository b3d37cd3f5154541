import { type Kysely, sql } from "kysely";
import type { MarketDay } from "../domain/webhook-event.js";
import type { Tables } from "./tables.js";
import type { TouchedRange, TouchedVersion, VersionsRead } from "./webhook-producer-rows.js";

// Writers in flight hold at most a few batches' ids each; a wider gap is a jump of the
// sequence (a restore, say), not versions to wait for.
const MAX_HOLE_SPAN = 100_000;

/**
 * Holes judged: the noted ids that filled since, and those to drop (filled, or every possible
 * writer has ended: still empty, so rolled back). Versions are written by the statement that
 * writes their report first, so a writer has its transaction id before it draws a version id:
 * a hole's writer, running when the hole was noted, had an id below the noted xmax, and has
 * ended once the xmin passed it.
 *
 * Every row the pass reads of `report_versions`, `reports` and the quality outcomes is looked
 * up by its key, one index probe per row (a lateral subquery, kept as written by `offset 0`).
 * Joined plainly, the planner hashed or merged whole tables: a pass of 5,000 versions scanned
 * every report ever stored (20 ms at 180,000 reports, growing with the table), and every
 * version when a hole was open.
 */
const holes = (seen: string | null) => sql`
  snapshot as materialized (
    select pg_snapshot_xmin(pg_current_snapshot())::text::bigint as xmin,
      pg_snapshot_xmax(pg_current_snapshot())::text::bigint as xmax, ${seen}::bigint as seen
  ),
  checked as (
    select h.id, v.id is not null as filled, h.noted_xmax <= s.xmin as ended
    from webhook_version_holes h cross join snapshot s
    left join lateral (select v.id from report_versions v where v.id = h.id offset 0) v on true
  ),
  dropped as (
    delete from webhook_version_holes h using checked c
    where h.id = c.id and (c.filled or c.ended)
  )`;

/** Up to `limit` versions past the cursor, and the ids below the last that this snapshot lacks. */
const fresh = (seen: string | null, limit: number) => sql`
  fresh as materialized (
    select v.id, v.report_id, v.quality_flags, v.recorded_at from report_versions v
    where v.id > ${seen}::bigint order by v.id limit ${limit}
  ),
  bounds as (select count(*)::int as fresh_count, max(id) as last from fresh),
  noted as (
    insert into webhook_version_holes (id, noted_xmax)
    select g.id, s.xmax from bounds b cross join snapshot s
    cross join generate_series(greatest(s.seen + 1, b.last - ${MAX_HOLE_SPAN}), b.last) as g(id)
    where not exists (select from fresh f where f.id = g.id)
    on conflict do nothing
  )`;

/** Every version read (filled holes, whose ids are below the cursor, first), with its flags before. */
const TOUCHED = sql`
  read as (
    select v.* from checked c cross join lateral (
      select v.id, v.report_id, v.quality_flags, v.recorded_at from report_versions v
      where v.id = c.id offset 0
    ) v
    where c.filled
    union all
    select * from fresh
  ),
  touched as (
    select v.*, r.organization_id, r.base_coin_id, r.exchange_id, r.quote_key,
      r.instrument_type, r.date, coalesce(lag(v.quality_flags)
        over (partition by v.report_id order by v.id), o.flags, 0) as flags_before
    from read v
    cross join lateral (
      select r.organization_id, r.base_coin_id, r.exchange_id, r.quote_key, r.instrument_type,
        r.date
      from reports r where r.id = v.report_id offset 0
    ) r
    left join lateral (
      select o.flags from webhook_quality_outcomes o where o.report_id = v.report_id offset 0
    ) o on true
  )`;

/**
 * The answer: the touched days per organization and coin, the market-days touched whose
 * deadline passed before notifications started (judged alone, see producePass), and the
 * versions that changed flags.
 */
const ANSWER = sql`
  ranges as (
    select organization_id as "organizationId", base_coin_id as "baseCoinId",
      to_char(min(date), 'YYYY-MM-DD') as "dateGte", to_char(max(date), 'YYYY-MM-DD') as "dateLte"
    from touched group by organization_id, base_coin_id
  ),
  early_days as (
    select distinct organization_id as "organizationId", base_coin_id as "baseCoinId",
      exchange_id as "exchangeId", quote_key as quote, instrument_type as "instrumentType",
      to_char(date, 'YYYY-MM-DD') as date
    from touched t where t.date < (select first_day from webhook_event_producer)
      -- Only days an obligation period holds can raise an event: a backfill of history owed
      -- by nobody (the benchmark's ingest, say) reads nothing more into the pass.
      and exists (select 1 from obligations o
        where o.organization_id = t.organization_id and o.base_coin_id = t.base_coin_id
          and o.since <= t.date and (o.until is null or o.until >= t.date))
  ),
  flag_changes as (
    select id, report_id as "reportId", organization_id as "organizationId",
      base_coin_id as "baseCoinId", exchange_id as "exchangeId", quote_key as quote,
      instrument_type as "instrumentType", to_char(date, 'YYYY-MM-DD') as date,
      quality_flags as "qualityFlags", recorded_at as "recordedAt"
    from touched where quality_flags <> flags_before
  )
  select (select json_agg(g) from ranges g) as ranges,
    (select json_agg(e) from early_days e) as early_days,
    (select json_agg(c order by c.id) from flag_changes c) as flag_changes,
    b.fresh_count, b.last::text
  from bounds b`;

type Answer = {
  ranges: TouchedRange[] | null;
  early_days: MarketDay[] | null;
  flag_changes: (Omit<TouchedVersion, "recordedAt"> & { recordedAt: string })[] | null;
  fresh_count: number;
  last: string | null;
};

/**
 * The versions a producer pass judges (called in the pass's transaction), read in ONE
 * statement after the cursor (the first to write of a pass: once its transaction has an id of
 * its own, that id holds its snapshot's xmin back), so that rows and snapshot figures come
 * from one snapshot: the versions that filled holes since they were noted, and up to `limit`
 * versions past the cursor, in id order; the holes judged and the new ones noted with the
 * snapshot's xmax. Only the days the versions touch and the versions that changed their
 * report's flags come back (see VersionsRead): a pass over unflagged versions reads none into
 * Node. Before the first pass ever (no cursor yet) it reads nothing.
 */
export async function versionsToJudge(db: Kysely<Tables>, limit: number): Promise<VersionsRead> {
  // Only the process holding the producer's lock moves the cursor: read first, it is the
  // same, and given to the statement as a value, the planner sees where the versions past it
  // begin (read as a subquery, it guessed a third of the table, and sorted all of it).
  // No JIT for the rest of the pass's transaction: the probes' summed estimates pass
  // jit_above_cost, and compiling took 38 of a 55 ms statement over 5,000 versions.
  const cursor = await sql<{ seen: string | null }>`
    select set_config('jit', 'off', true),
      (select versions_seen::text from webhook_event_producer) as seen`.execute(db);
  const seen = cursor.rows[0]?.seen ?? null;
  const r = await sql<Answer>`
    with ${holes(seen)}, ${fresh(seen, limit)}, ${TOUCHED}, ${ANSWER}`.execute(db);
  const row = r.rows[0];
  return {
    ranges: row?.ranges ?? [],
    earlyDays: row?.early_days ?? [],
    flagChanges: (row?.flag_changes ?? []).map((v) => ({
      ...v,
      reportId: Number(v.reportId),
      recordedAt: new Date(v.recordedAt),
    })),
    freshCount: row?.fresh_count ?? 0,
    last: row?.last == null ? undefined : Number(row.last),
  };
}
