import { type Caller, maySubmit, organizationOfKind } from "../domain/caller.js";
import { addDays, EARLIEST_DATE, utcDate } from "../domain/dates.js";
import { ForbiddenError, NotFoundError, ValidationError } from "../domain/errors.js";
import {
  lastCompleteMonth,
  MIN_PEERS,
  type MonthFigures,
  monthDays,
  NO_FIGURES,
  peerMedian,
  REPORT_CARD_RATES,
  ratesOf,
} from "../domain/report-card.js";
import type { ReportCard, ReportCardQuery } from "../schemas/report-card.js";
import type { Stores } from "../store/stores.js";

export type ReportCardDeps = { stores: Stores; now: () => Date; deadlineUtc: string };

/** Only a market maker submits, so only it has a report card: any other key is a 403. */
export function assertHasReportCard(caller: Caller): void {
  if (!maySubmit(caller)) throw new ForbiddenError("Only market-maker keys have a report card");
}

/** GET /api/v1/report-card. */
export function getReportCard(deps: ReportCardDeps, caller: Caller, query: ReportCardQuery) {
  assertHasReportCard(caller);
  return reportCardOf(deps, caller.organizationId, query);
}

/** `trading-reports report-card ORG`: the operator's look at one market maker's card. */
export async function operatorReportCard(
  deps: ReportCardDeps,
  organizationId: string,
  query: ReportCardQuery,
): Promise<ReportCard> {
  const organization = await deps.stores.organizations.organization(organizationId);
  if (organization === undefined)
    throw new NotFoundError(`No market maker has the id '${organizationId}'`);
  if (organization.kind !== "market_maker")
    throw new NotFoundError(
      `'${organizationId}' is ${organizationOfKind(organization.kind)}; report cards are for market makers`,
    );
  return reportCardOf(deps, organizationId, query);
}

/**
 * A market maker's month (CONTRACT section 6): its submissions, problems, obligations and
 * corrections, each rate beside the median of every market maker reporting that month. The
 * figures of all of them are read at once; only the medians leave this function.
 */
async function reportCardOf(
  deps: ReportCardDeps,
  organizationId: string,
  query: ReportCardQuery,
): Promise<ReportCard> {
  const month = checkedMonth(query.month, deps.now());
  const { dateGte, dateLte } = monthDays(month);
  const from = new Date(`${dateGte}T00:00:00Z`);
  const before = new Date(`${addDays(dateLte, 1)}T00:00:00Z`);
  const figures = await monthFigures(deps, { dateGte, dateLte, from, before });
  const problems = await deps.stores.reportCards.problemCounts(organizationId, from, before);
  const own = figures.get(organizationId) ?? NO_FIGURES;
  const peers = [...figures.values()].filter((f) => f.submissions > 0 || f.reportsDue > 0);
  const shown = peers.length >= MIN_PEERS;
  const ownRates = ratesOf(own);
  const peerRates = peers.map(ratesOf);
  const { reportsStored: _stored, ...counts } = own;
  return {
    organizationId,
    month,
    ...counts,
    problemsByCode: sumBy(problems, (p) => p.code),
    problemsByField: sumBy(problems, (p) => p.field),
    qualityFlags: await deps.stores.qualityDepth.versionFlagCounts(
      organizationId,
      dateGte,
      dateLte,
    ),
    rates: Object.fromEntries(
      REPORT_CARD_RATES.map((rate) => [
        rate,
        {
          value: ownRates[rate],
          peerMedian: shown ? peerMedian(peerRates.map((r) => r[rate])) : null,
        },
      ]),
    ) as ReportCard["rates"],
    peers: {
      marketMakers: peers.length,
      mediansShown: shown,
      note: shown
        ? null
        : `Fewer than ${MIN_PEERS} market makers reported in ${month}: peer medians are withheld so that no other organization's figures can be inferred`,
    },
  };
}

async function monthFigures(
  deps: ReportCardDeps,
  range: { dateGte: string; dateLte: string; from: Date; before: Date },
): Promise<Map<string, MonthFigures>> {
  const figures = new Map<string, MonthFigures>();
  const of = (id: string) => {
    const found = figures.get(id) ?? { ...NO_FIGURES };
    figures.set(id, found);
    return found;
  };
  const cards = deps.stores.reportCards;
  for (const row of await cards.submissionFigures(range.from, range.before)) {
    const { organizationId, ...counts } = row;
    Object.assign(of(organizationId), counts);
  }
  const corrections = await cards.correctionFigures(range.dateGte, range.dateLte, deps.deadlineUtc);
  for (const row of corrections) {
    const f = of(row.organizationId);
    f.reportsStored = row.reports;
    f.correctionsAfterDeadline = row.correctionsAfterDeadline;
  }
  const scorecards = await deps.stores.scorecards.markets({
    scope: { kind: "all" },
    dateGte: range.dateGte,
    dateLte: range.dateLte,
    now: deps.now(),
    deadlineUtc: deps.deadlineUtc,
  });
  for (const market of scorecards) {
    const f = of(market.organizationId);
    f.reportsDue += market.daysDue;
    f.reportsMissing += market.daysMissing;
    f.reportsLate += market.daysLate;
  }
  return figures;
}

function sumBy<T extends { n: number }>(rows: T[], key: (row: T) => string) {
  const sums: Record<string, number> = {};
  for (const row of rows) sums[key(row)] = (sums[key(row)] ?? 0) + row.n;
  return sums;
}

/** The month asked for (default the last complete one): from 2000-01 to the current month. */
function checkedMonth(month: string | undefined, now: Date): string {
  if (month === undefined) return lastCompleteMonth(now);
  if (month > utcDate(now).slice(0, 7))
    throw new ValidationError([{ path: "month", message: "Month must not be in the future" }]);
  if (month < EARLIEST_DATE.slice(0, 7))
    throw new ValidationError([
      { path: "month", message: `Month must not be before ${EARLIEST_DATE.slice(0, 7)}` },
    ]);
  return month;
}
