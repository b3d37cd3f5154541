import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import type { DatabaseConfig } from "../src/config.js";
import { compareRecordKeys, METRICS, type Report } from "../src/domain/report.js";
import { loadFixture } from "../src/services/fixtures.js";
import { recomputePublicDepthFlags } from "../src/services/quality-recompute.js";
import { openDatabase } from "../src/store/database.js";
import { migrate } from "../src/store/migrate.js";
import { createStores } from "../src/store/stores.js";
import { bulkGenerate } from "./bulk.js";
import { benchFixture } from "./data.js";
import { round } from "./results.js";

/**
 * Issue 16's target: recomputing `exceeds_public_depth` over 1 M reports (public depth known
 * for every market-day) within 30 s on PostgreSQL, while a submission that rewrites reports
 * of those market-days waits at most 1 s at a time. Submissions of 300 stored keys run one
 * after another during the recomputation; their longest time is the longest pause it caused.
 */
export type QualityBenchResults = {
  reports: number;
  marketDays: number;
  seconds: number;
  batches: number;
  flagsChanged: number;
  longestBatchMs: number;
  submissions: number;
  longestSubmissionMs: number;
  submissionAloneP50Ms: number;
};

export async function qualitySuite(
  config: DatabaseConfig,
  quick: boolean,
  log: (line: string) => void,
): Promise<QualityBenchResults> {
  const reports = quick ? 50_000 : 1_000_000;
  const database = await openDatabase(config);
  try {
    const { db } = database;
    await migrate(db);
    const stores = createStores(db);
    await loadFixture(stores, benchFixture(), new Date());
    await bulkGenerate(db, 0, reports, log);
    // One public depth per market-day the reports name, from 0 to about the largest reported.
    const days = await sql<{ n: number }>`
      with inserted as (
        insert into public_depth_days (exchange_id, base_coin_id, instrument_type, quote_symbol,
          day, quote_coin_id, taken_at, cost_to_move_up_usd, cost_to_move_down_usd)
        select distinct exchange_id, base_coin_id, 'spot', 'USDT', date, 'tether', now(),
          (hashtext(exchange_id || base_coin_id || date) & 1023) * 60.0,
          (hashtext(base_coin_id || date || exchange_id) & 1023) * 60.0
        from reports
        returning 1
      ) select count(*)::int as n from inserted`.execute(db);
    await sql`analyze public_depth_days`.execute(db);
    const keys = await sql<Record<string, string>>`
      select to_char(date, 'YYYY-MM-DD') as date, exchange_id, base_coin_id, organization_id
      from reports tablesample system (5) limit 3000`.execute(db);
    const batches = batchesOf(keys.rows);
    const submit = async (i: number) => {
      const batch = batches[i % batches.length] ?? [];
      const t0 = performance.now();
      await stores.reports.upsert(
        {
          id: randomUUID(),
          organizationId: batch[0]?.organization ?? "org-00",
          apiKeyId: null,
          schemaVersion: 2,
          receivedAt: new Date(),
        },
        batch.map((b) => b.report),
        await stores.references.version(),
      );
      return performance.now() - t0;
    };
    const alone: number[] = [];
    for (let i = 0; i < 10; i++) alone.push(await submit(i));

    let running = true;
    const during: number[] = [];
    const submissions = (async () => {
      for (let i = 0; running; i++) during.push(await submit(i));
    })();
    const batchTimes: number[] = [];
    const timed = {
      ...stores.qualityDepth,
      recomputeRange: async (from: number, to: number) => {
        const t0 = performance.now();
        const changed = await stores.qualityDepth.recomputeRange(from, to);
        batchTimes.push(performance.now() - t0);
        return changed;
      },
    };
    const started = performance.now();
    const result = await recomputePublicDepthFlags({ qualityDepth: timed });
    const seconds = (performance.now() - started) / 1000;
    running = false;
    await submissions;
    log(
      `  recomputed ${reports} reports in ${seconds.toFixed(1)} s (${result.batches} batches); ` +
        `longest concurrent submission ${Math.max(0, ...during).toFixed(0)} ms (target 1000)`,
    );
    return {
      reports,
      marketDays: days.rows[0]?.n ?? 0,
      seconds: round(seconds),
      batches: result.batches,
      flagsChanged: result.changed,
      longestBatchMs: round(Math.max(...batchTimes)),
      submissions: during.length,
      longestSubmissionMs: round(Math.max(0, ...during)),
      submissionAloneP50Ms: round([...alone].sort((a, b) => a - b)[5] ?? 0),
    };
  } finally {
    await database.close();
  }
}

/** Batches of up to 300 stored keys of one organization each, as reports to store again. */
function batchesOf(rows: Record<string, string>[]) {
  const byOrg = new Map<string, { organization: string; report: Report }[]>();
  for (const row of rows) {
    const organization = row.organization_id ?? "";
    const list = byOrg.get(organization) ?? [];
    if (list.length >= 300) continue;
    const metrics = Object.fromEntries(METRICS.map((m, i) => [m, 1000 + i])) as Report["metrics"];
    list.push({
      organization,
      report: {
        date: row.date ?? "",
        exchangeId: row.exchange_id ?? "",
        baseCoinId: row.base_coin_id ?? "",
        quoteKey: "tether",
        instrumentType: "spot",
        quoteCoinId: "tether",
        quoteCoinSymbol: null,
        type: "project",
        schemaVersion: 2,
        metrics,
        eligibilityReason: null,
      },
    });
    byOrg.set(organization, list);
  }
  return [...byOrg.values()].map((list) =>
    list.sort((a, b) => compareRecordKeys(a.report, b.report)),
  );
}

const verdict = (met: boolean) => (met ? "(met)" : "(missed)");

export function qualityLines(target: string, q: QualityBenchResults): string[] {
  // The 30 s target is for 1 M reports; a quick run is held to the same rate.
  const secondsTarget = (30 * q.reports) / 1_000_000;
  return [
    `### ${target}: quality flags (exceeds_public_depth recomputed over ${q.reports} reports, ${q.marketDays} market-days)`,
    "",
    "| measure | value | target |",
    "|---|---:|---:|",
    `| recomputation, s | ${q.seconds} | ≤ ${secondsTarget} (30 s per 1 M reports) ${verdict(q.seconds <= secondsTarget)} |`,
    `| batches / flags changed | ${q.batches} / ${q.flagsChanged} | |`,
    `| longest batch, ms | ${q.longestBatchMs} | |`,
    `| longest concurrent submission (300 stored keys), ms | ${q.longestSubmissionMs} (${q.submissions} submissions; alone p50 ${q.submissionAloneP50Ms}) | ≤ 1000 ${verdict(q.longestSubmissionMs <= 1000)} |`,
    "",
  ];
}
