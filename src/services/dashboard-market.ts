import { type Caller, readScope } from "../domain/caller.js";
import { addDays, utcDate } from "../domain/dates.js";
import { NotFoundError } from "../domain/errors.js";
import type { KpiName, Kpis, ObligationMarket } from "../domain/obligation.js";
import type { Metric } from "../domain/report.js";
import type { ReportCsvItem } from "../schemas/report.js";
import type { ObligationStore, StoredObligation } from "../store/obligation-store.js";
import { engagedMakerName } from "./dashboard-scope.js";
import { exportReports, type ListDeps } from "./list-reports.js";
import { scorecardRange } from "./scorecards.js";

/** A market page covers 90 days unless asked, and at most two years (both ends included). */
export const MARKET_PAGE_DAYS = { defaultDays: 90, maxDays: 731 };

/** One market maker's market: what an obligation names, with the organization and coin. */
export type MarketKey = { organizationId: string; baseCoinId: string } & ObligationMarket;

/** One line of a chart: a reported metric, or an obligation's threshold (null: none set). */
export type ChartSeries = { label: string; threshold: boolean; values: (number | null)[] };
export type Chart = { id: string; title: string; unit: "USD" | "%"; series: ChartSeries[] };

export type MarketPage = {
  market: MarketKey & { organizationName: string };
  dateGte: string;
  dateLte: string;
  /**
   * The days of the range the market is owed or reported, ascending: the x values of every
   * chart (a day without a report has null values: a gap). See `chartDays`.
   */
  dates: string[];
  /** How many of them have a report. */
  reportedDays: number;
  charts: Chart[];
  /** The reported days whose report carries quality flags (CONTRACT section 6), ascending. */
  flaggedDays: { date: string; flags: string[] }[];
};

const BANDS = [
  { band: "Tob", title: "top of book" },
  { band: "10", title: "10 bps" },
  { band: "25", title: "25 bps" },
  { band: "50", title: "50 bps" },
  { band: "100", title: "100 bps" },
  { band: "200", title: "200 bps" },
] as const;

type Deps = ListDeps & { obligations: ObligationStore };

/**
 * A market page (issue 14): the market's reports over the range, read through the listing
 * (the caller's own reports, or a project's or operator's scoped ones), drawn as depth per
 * band (bid and ask) and spread, with the thresholds of the obligation periods naming the
 * market as lines (null on days no period holds), and the two other metrics a KPI may judge
 * (time at top of book, maker fills). Outside the caller's scope: not found.
 */
export async function marketPage(
  deps: Deps,
  caller: Caller,
  market: MarketKey,
  query: { dateGte?: string; dateLte?: string },
): Promise<MarketPage> {
  const organizationName = await engagedMakerName(deps, caller, market, "Market not found");
  const range = scorecardRange(query, deps.now(), MARKET_PAGE_DAYS);
  const [reports, periods] = await Promise.all([
    marketReports(deps, caller, market, range),
    deps.obligations.list(readScope(caller), {
      organizationId: market.organizationId,
      baseCoinId: market.baseCoinId,
    }),
  ]);
  const owed = periods.filter((p) => namesMarket(p, market));
  if (reports.length === 0 && owed.length === 0) await assertMarketReported(deps, caller, market);
  // A day without a report is a gap in the lines (null), not a straight segment across it.
  const byDate = new Map(reports.map((r) => [r.date, r]));
  const dates = chartDays(range, reports, owed, utcDate(deps.now()));
  const days = dates.map((date) => byDate.get(date));
  const kpis = dates.map((date) => kpisOn(periods, market, date));
  return {
    market: { ...market, organizationName },
    ...range,
    dates,
    reportedDays: reports.length,
    charts: chartsOf(days, kpis),
    flaggedDays: reports.flatMap((r) =>
      r.qualityFlags ? [{ date: r.date, flags: r.qualityFlags.split(" ") }] : [],
    ),
  };
}

async function marketReports(
  deps: ListDeps,
  caller: Caller,
  market: MarketKey,
  range: { dateGte: string; dateLte: string },
): Promise<ReportCsvItem[]> {
  const chunks: ReportCsvItem[][] = [];
  const query = { ...market, ...range, include: "quality" as const };
  // The coin's engagement may have ended: the page is still the maker's (engagedMakerName).
  for await (const chunk of exportReports(deps, caller, query, true)) {
    chunks.push(chunk);
  }
  // The listing runs newest first; charts run left to right.
  return chunks.flat().reverse();
}

const namesMarket = (period: StoredObligation, market: MarketKey) =>
  period.markets.some(
    (m) =>
      m.exchangeId === market.exchangeId &&
      m.quote === market.quote &&
      m.instrumentType === market.instrumentType,
  );

/**
 * A market no obligation names and no report of the caller's scope has, on any day, is no
 * page (a made-up or mistyped address), as a coin or market maker outside the scope is not.
 */
async function assertMarketReported(deps: ListDeps, caller: Caller, market: MarketKey) {
  const chunks = exportReports(deps, caller, { ...market }, true);
  const first = await chunks.next();
  await chunks.return(undefined);
  if (first.done || first.value.length === 0) throw new NotFoundError("Market not found");
}

/** The KPIs of the period holding `date` that names the market ({} when none does). */
function kpisOn(periods: StoredObligation[], market: MarketKey, date: string): Kpis {
  const period = periods.find(
    (p) => p.since <= date && (p.until === null || date <= p.until) && namesMarket(p, market),
  );
  return period?.kpis ?? {};
}

/**
 * The x axis: the range, narrowed to the days from the first one an obligation names the
 * market or it was reported to the last such day (an open period ends today: no report is
 * dated later). So days missing at either end are gaps, as those between (a market that
 * stopped reporting ends in a gap, it does not end on its last good day), and a range of an
 * obligation without reports still has its days and thresholds; a market no period names
 * spans its reports.
 */
function chartDays(
  range: { dateGte: string; dateLte: string },
  reports: ReportCsvItem[],
  owed: StoredObligation[],
  today: string,
): string[] {
  const spans = owed.map((p) => ({
    from: p.since,
    to: p.until === null || p.until > today ? today : p.until,
  }));
  const [firstReport, lastReport] = [reports[0], reports.at(-1)];
  if (firstReport && lastReport) spans.push({ from: firstReport.date, to: lastReport.date });
  let first: string | undefined;
  let last: string | undefined;
  for (const span of spans) {
    const from = span.from > range.dateGte ? span.from : range.dateGte;
    const to = span.to < range.dateLte ? span.to : range.dateLte;
    if (from > to) continue; // outside the range (or a period not begun by today)
    if (first === undefined || from < first) first = from;
    if (last === undefined || to > last) last = to;
  }
  const dates: string[] = [];
  if (first === undefined || last === undefined) return dates;
  for (let date = first; date <= last; date = addDays(date, 1)) dates.push(date);
  return dates;
}

function chartsOf(reports: (ReportCsvItem | undefined)[], kpis: Kpis[]): Chart[] {
  const metric = (m: Metric) => reports.map((r) => (r?.[m] as number | null | undefined) ?? null);
  const threshold = (k: KpiName) => kpis.map((p) => p[k] ?? null);
  // A threshold no day sets is no line at all.
  const lines = (series: ChartSeries[]) =>
    series.filter((s) => !s.threshold || s.values.some((v) => v !== null));
  const depth = BANDS.map(
    ({ band, title }): Chart => ({
      id: `depth-${band.toLowerCase()}`,
      title: `Depth at ${title}`,
      unit: "USD",
      series: lines([
        { label: "Bid depth", threshold: false, values: metric(`bidDepth${band}`) },
        { label: "Ask depth", threshold: false, values: metric(`askDepth${band}`) },
        { label: "Minimum bid depth", threshold: true, values: threshold(`minBidDepth${band}`) },
        { label: "Minimum ask depth", threshold: true, values: threshold(`minAskDepth${band}`) },
      ]),
    }),
  );
  const spread: Chart = {
    id: "spread",
    title: "Bid-ask spread",
    unit: "%",
    series: lines([
      { label: "Spread", threshold: false, values: metric("bidAskSpread") },
      { label: "Maximum spread", threshold: true, values: threshold("maxBidAskSpread") },
    ]),
  };
  // The other two KPIs an obligation may set: without them a day "missed" on them showed no cause.
  const topOfBook: Chart = {
    id: "top-of-book",
    title: "Share of time at top of book",
    unit: "%",
    series: lines([
      { label: "Time at top of book", threshold: false, values: metric("topOfBookPercentage") },
      { label: "Minimum time", threshold: true, values: threshold("minTopOfBookPercentage") },
    ]),
  };
  const fills: Chart = {
    id: "fill-volume",
    title: "Order fill volume",
    unit: "USD",
    series: lines([
      { label: "Maker fills", threshold: false, values: metric("orderFillVolumeMaker") },
      { label: "Taker fills", threshold: false, values: metric("orderFillVolumeTaker") },
      {
        label: "Minimum maker fills",
        threshold: true,
        values: threshold("minOrderFillVolumeMaker"),
      },
    ]),
  };
  return [...depth, spread, topOfBook, fills];
}
