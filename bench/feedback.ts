/**
 * Issue 15: "rejected submissions must not slow down accepted ones: measure it". Accepted v2
 * ingest (4 clients, new keys) alone, and again while 2 more clients send a stream of rejected
 * batches (300 records, one problem each: 300 problems logged per batch, and a
 * submission.rejected event) for exactly as long as the accepted phase runs. The phases
 * alternate in rounds, each going first in every other round, so that drift (the tables
 * growing, the machine's other load) falls on both alike. The figure is the ratio of the two
 * accepted throughputs; the target is >= 0.9 (see the README).
 */
import { INGEST_ORG, orgKey, v2Batch } from "./data.js";
import type { Phase } from "./results.js";
import { percentile, type RunningServer, runLoad, startLoad } from "./server.js";

export type FeedbackResults = {
  feedback_accepted_alone: Phase;
  feedback_accepted_with_rejections: Phase;
  /** Accepted throughput beside the rejected stream over alone (1 = not slowed at all). */
  feedbackRatio: number;
  /** Rejected submissions answered per second beside the accepted phase. */
  feedbackRejectedPerSecond: number;
};

export const FEEDBACK_TARGET = 0.9;
const ROUNDS = 4;
const round2 = (n: number) => Math.round(n * 100) / 100;

export async function feedbackSuite(
  server: RunningServer,
  options: { batches: number; batchSize: number; offset: number },
): Promise<FeedbackResults> {
  const { batchSize } = options;
  const perPhase = Math.max(4, Math.round(options.batches / ROUNDS));
  let nextBatch = 0;
  const accepted = () =>
    runLoad({
      origin: server.origin,
      key: orgKey(INGEST_ORG),
      requests: Array.from({ length: perPhase }, () => ({
        method: "POST",
        path: "/api/v2/report",
        body: JSON.stringify({ data: v2Batch(nextBatch++, batchSize, options.offset) }),
      })),
      concurrency: 4,
      expectStatus: 201,
    });
  const rejectedBody = JSON.stringify({
    data: v2Batch(0, batchSize).map((r) => ({ ...r, baseCoinId: "no-such-coin" })),
  });
  const alone = new Totals(batchSize);
  const beside = new Totals(batchSize);
  const rejected = { count: 0, elapsedMs: 0 };
  const turns = [
    async () => alone.add(await accepted()),
    async () => {
      const stream = startLoad({
        origin: server.origin,
        key: orgKey(INGEST_ORG),
        requests: [{ method: "POST", path: "/api/v2/report", body: rejectedBody }],
        concurrency: 2,
        expectStatus: 400,
        untilStopped: true,
      });
      beside.add(await accepted());
      const r = await stream.stop();
      rejected.count += r.latencies.length;
      rejected.elapsedMs += r.elapsedMs;
    },
  ];
  for (let r = 0; r < ROUNDS; r++) {
    for (const turn of r % 2 ? [...turns].reverse() : turns) await turn();
  }
  const feedback_accepted_alone = alone.phase();
  const feedback_accepted_with_rejections = beside.phase();
  return {
    feedback_accepted_alone,
    feedback_accepted_with_rejections,
    feedbackRatio: round2(
      feedback_accepted_with_rejections.recordsPerSecond / feedback_accepted_alone.recordsPerSecond,
    ),
    feedbackRejectedPerSecond: Math.round(rejected.count / (rejected.elapsedMs / 1000)),
  };
}

/** Latencies, time and errors summed over the rounds of one phase. */
class Totals {
  private readonly latencies: number[] = [];
  private elapsedMs = 0;
  private errors = 0;

  constructor(private readonly batchSize: number) {}

  add(run: { latencies: number[]; elapsedMs: number; errorCount: number }): void {
    this.latencies.push(...run.latencies);
    this.elapsedMs += run.elapsedMs;
    this.errors += run.errorCount;
  }

  phase(): Phase {
    const records = this.latencies.length * this.batchSize;
    return {
      records,
      recordsPerSecond: Math.round(records / (this.elapsedMs / 1000)),
      p50Ms: Math.round(percentile(this.latencies, 50) * 10) / 10,
      p99Ms: Math.round(percentile(this.latencies, 99) * 10) / 10,
      errors: this.errors,
    };
  }
}

/** The Markdown of these figures for bench/results/latest.md. */
export function feedbackLines(target: string, r: FeedbackResults): string[] {
  const verdict = r.feedbackRatio >= FEEDBACK_TARGET ? "met" : "missed";
  return [
    `### ${target}: accepted ingest beside rejected submissions (v2 batches of 300, 4 clients)`,
    "",
    "| phase | records/s | p50 ms | p99 ms |",
    "|---|---:|---:|---:|",
    ...(
      [
        ["alone", r.feedback_accepted_alone],
        ["beside rejected", r.feedback_accepted_with_rejections],
      ] as const
    ).map(([name, p]) => `| ${name} | ${p.recordsPerSecond} | ${p.p50Ms} | ${p.p99Ms} |`),
    "",
    `Beside ${r.feedbackRejectedPerSecond} rejected submissions/s (2 clients) / alone: ${r.feedbackRatio} (target >= ${FEEDBACK_TARGET}: ${verdict})`,
    "",
  ];
}
