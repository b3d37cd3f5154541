/**
 * When each generated demo report arrives, and which obligation days the demo market makers
 * fall short on, so that the demo's scorecards are worth reading: on an obligation market most
 * days are reported on time and meet every KPI, some miss one KPI, a few are never reported and
 * a few arrive after the deadline. Deterministic: the same day of the same market always gets
 * the same fate, so restarting on another day shows the same history.
 */
import { addDays } from "../domain/dates.js";
import { KPIS, type KpiName, type Kpis } from "../domain/obligation.js";
import type { DemoFixture, DemoReport } from "./demo-reports.js";

/** Shares of obligation-market days: never reported, reported late, reported with a KPI missed. */
const MISSING = 0.03;
const LATE = 0.05;
const MISSED = 0.08;
/**
 * A day's reports are uploaded the next morning, before the 12:00 UTC deadline; a late report
 * comes with the upload of the morning after (a day late). So late reports share the next
 * day's submission, and the demo makes one submission per market maker and day.
 */
const UPLOAD = "06:00";

export type Arrival = { at: Date; data: DemoReport[] };

type Period = { since: string; until: string | null; kpis: Kpis };

/**
 * The organization's reports grouped by arrival time, in time order, with the obligation days'
 * shortfalls applied (missing days left out). An arrival after `now` is made `now`.
 */
export function scheduleDemoReports(
  fixture: DemoFixture,
  organizationId: string,
  reports: readonly DemoReport[],
  now: Date,
): Arrival[] {
  const periods = obligationPeriods(fixture, organizationId);
  const arrivals = new Map<number, DemoReport[]>();
  for (const report of reports) {
    const key = marketKey(report);
    const period = periods
      .get(key)
      ?.find((p) => p.since <= report.date && (p.until === null || report.date <= p.until));
    let record = report;
    let daysAfter = 1;
    if (period !== undefined) {
      const fate = draw(`${organizationId}|${key}|${report.date}`);
      if (fate < MISSING) continue;
      if (fate < MISSING + LATE) daysAfter = 2;
      const kpis = Object.keys(period.kpis) as KpiName[];
      const shortfall = draw(`${organizationId}|${key}|${report.date}|kpi`);
      const kpi = kpis[Math.floor(shortfall * 1000) % kpis.length];
      if (shortfall < MISSED && kpi !== undefined)
        record = fallShort(report, kpi, period.kpis[kpi] ?? 0, shortfall / MISSED);
    }
    const upload = Date.parse(`${addDays(report.date, daysAfter)}T${UPLOAD}:00Z`);
    const at = Math.min(now.getTime(), upload);
    arrivals.set(at, [...(arrivals.get(at) ?? []), record]);
  }
  return [...arrivals.entries()]
    .sort(([a], [b]) => a - b)
    .map(([at, data]) => ({ at: new Date(at), data }));
}

function marketKey(r: { baseCoinId: string; exchangeId: string; instrumentType: string } & object) {
  const quote =
    (r as { quoteCoinId?: string }).quoteCoinId ??
    (r as { quoteCoinSymbol?: string }).quoteCoinSymbol?.toUpperCase();
  return `${r.baseCoinId}|${r.exchangeId}|${quote}|${r.instrumentType}`;
}

/** The periods of each obligation market of the organization, by market key. */
function obligationPeriods(fixture: DemoFixture, organizationId: string) {
  const periods = new Map<string, Period[]>();
  const organization = fixture.organizations.find((o) => o.id === organizationId);
  for (const engagement of organization?.engagements ?? []) {
    for (const o of engagement.obligations ?? []) {
      for (const m of o.markets) {
        const key = `${engagement.baseCoinId}|${m.exchangeId}|${m.quote}|${m.instrumentType}`;
        periods.set(key, [...(periods.get(key) ?? []), { ...o, until: o.until ?? null }]);
      }
    }
  }
  return periods;
}

const BANDS = ["Tob", "10", "25", "50", "100", "200"] as const;
const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * The report with one KPI missed by a plausible margin (`u` in 0..1 sets how far), its other
 * figures kept consistent: a thin side is thin at every band, and the sums follow.
 */
function fallShort(report: DemoReport, kpi: KpiName, threshold: number, u: number): DemoReport {
  const r = { ...report } as Record<string, number> & DemoReport;
  const metric = KPIS[kpi].metric;
  if (KPIS[kpi].bound === "max") {
    r[metric] = Math.min(100, Math.round(threshold * (1.2 + u) * 10_000) / 10_000);
    return r;
  }
  const target = threshold * (0.55 + 0.4 * u);
  const factor = target / Math.max(r[metric] ?? 1, 1);
  const side = /^(bid|ask)Depth/.exec(metric)?.[1];
  if (side !== undefined) {
    for (const band of BANDS)
      r[`${side}Depth${band}`] = round2((r[`${side}Depth${band}`] ?? 0) * factor);
    for (const band of ["50", "100", "200"])
      r[`bidAskDepth${band}`] = round2((r[`bidDepth${band}`] ?? 0) + (r[`askDepth${band}`] ?? 0));
  } else if (metric === "orderFillVolumeMaker") {
    r.orderFillVolumeMaker = round2(r.orderFillVolumeMaker * factor);
    r.orderFillVolumeMakerTob = round2(r.orderFillVolumeMakerTob * factor);
  } else {
    r[metric] = round2(target);
  }
  return r;
}

/** A deterministic draw in [0, 1) from a text: FNV-1a, then murmur3's finalizer to spread it. */
function draw(text: string): number {
  let hash = 2_166_136_261;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16_777_619);
  hash = Math.imul(hash ^ (hash >>> 16), 0x85eb_ca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2_ae35);
  return ((hash ^ (hash >>> 16)) >>> 0) / 4_294_967_296;
}
