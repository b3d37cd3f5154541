import { type Kysely, sql } from "kysely";
import { deadlineOf } from "../domain/obligation.js";
import { RETRY_IN_PROGRESS } from "../domain/problem-codes.js";
import type { Tables } from "./tables.js";

/** One organization's submissions of a period (dry runs are tests: not counted). */
export type SubmissionFigures = {
  organizationId: string;
  submissions: number;
  rejectedSubmissions: number;
  recordsAccepted: number;
  recordsRejected: number;
};

/** One organization's reports dated in a period, and their versions after the deadline. */
export type CorrectionFigures = {
  organizationId: string;
  reports: number;
  correctionsAfterDeadline: number;
};

/** The report card's figures, for every organization at once (the peers' medians need them). */
export function createReportCardStore(db: Kysely<Tables>) {
  return {
    /**
     * Market makers' submissions received in [from, before), by organization (a project's or
     * operator's log holds only its refused attempts: no figures of a peer).
     */
    async submissionFigures(from: Date, before: Date): Promise<SubmissionFigures[]> {
      const result = await sql<SubmissionFigures>`
        select s.organization_id as "organizationId",
          count(*)::int as submissions,
          (count(*) filter (where s.status = 'rejected'))::int as "rejectedSubmissions",
          coalesce(sum(s.record_count) filter (where s.status = 'accepted'), 0)::int
            as "recordsAccepted",
          coalesce(sum(s.record_count) filter (where s.status = 'rejected'), 0)::int
            as "recordsRejected"
        from submissions s join organizations o on o.id = s.organization_id
        where not s.dry_run and s.submitted_at >= ${from} and s.submitted_at < ${before}
          and o.kind = 'market_maker'
          and not exists (select 1 from submission_problem_counts c
            where c.submission_id = s.id and c.code = ${RETRY_IN_PROGRESS})
        group by s.organization_id`.execute(db);
      return result.rows;
    },

    /** Every problem of the organization's rejected submissions in [from, before). */
    async problemCounts(organizationId: string, from: Date, before: Date) {
      const result = await sql<{ code: string; field: string; n: number }>`
        select c.code, c.field, sum(c.n)::int as n
        from submissions s join submission_problem_counts c on c.submission_id = s.id
        where s.organization_id = ${organizationId} and not s.dry_run
          and s.submitted_at >= ${from} and s.submitted_at < ${before}
          and c.code <> ${RETRY_IN_PROGRESS}
        group by c.code, c.field order by c.code, c.field`.execute(db);
      return result.rows;
    },

    /**
     * By organization: its reports dated in [dateGte, dateLte], and how many of their versions
     * after the first arrived after the day's deadline (a late first version is "late", not a
     * correction).
     */
    async correctionFigures(
      dateGte: string,
      dateLte: string,
      deadlineUtc: string,
    ): Promise<CorrectionFigures[]> {
      const base = deadlineOf(dateGte, deadlineUtc).toISOString();
      const result = await sql<CorrectionFigures>`
        with dated as (
          -- Per market maker, so that each takes a range of its key index (organization,
          -- date): reports has no index on the date alone.
          select r.id, r.organization_id, r.date
          from organizations o join reports r on r.organization_id = o.id
            and r.date >= ${dateGte}::date and r.date <= ${dateLte}::date
          where o.kind = 'market_maker'
        ),
        versions as (
          select v.report_id, v.recorded_at,
            row_number() over (partition by v.report_id order by v.id) as n
          from report_versions v join dated d on d.id = v.report_id
        )
        select d.organization_id as "organizationId", count(distinct d.id)::int as reports,
          (count(v.report_id) filter (where v.n > 1 and v.recorded_at >
            ${base}::timestamptz + (d.date - ${dateGte}::date) * interval '24 hours'))::int
            as "correctionsAfterDeadline"
        from dated d left join versions v on v.report_id = d.id
        group by d.organization_id`.execute(db);
      return result.rows;
    },
  };
}

export type ReportCardStore = ReturnType<typeof createReportCardStore>;
