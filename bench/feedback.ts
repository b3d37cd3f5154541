/**
 * Issue 15: "rejected submissions must not slow down accepted ones: measure it". Accepted v2
 * ingest (4 clients, new keys) alone, then again while 2 more clients send a stream of
 * rejected batches (300 records, one problem each: 300 problems logged per batch, and a
 * submission.rejected event). The ratio of the two throughputs is the figure.
 */
import { INGEST_ORG, orgKey, v2Batch } from "./data.js";
import type { Phase } from "./results.js";
import { type RunningServer, runLoad } from "./server.js";

type PhaseOf = (records: number, latencies: number[], elapsedMs: number) => Phase;

export async function feedbackSuite(
  server: RunningServer,
  options: { batches: number; batchSize: number; regions: [number, number]; phaseOf: PhaseOf },
) {
  const { batches, batchSize, phaseOf } = options;
  const accepted = (offset: number) =>
    runLoad({
      origin: server.origin,
      key: orgKey(INGEST_ORG),
      requests: Array.from({ length: batches }, (_, b) => ({
        method: "POST",
        path: "/api/v2/report",
        body: JSON.stringify({ data: v2Batch(b, batchSize, offset) }),
      })),
      concurrency: 4,
      expectStatus: 201,
    });
  const rejectedBody = JSON.stringify({
    data: v2Batch(0, batchSize).map((r) => ({ ...r, baseCoinId: "no-such-coin" })),
  });
  const alone = await accepted(options.regions[0]);
  // The rejected stream outlasts the accepted phase measured beside it.
  const rejected = runLoad({
    origin: server.origin,
    key: orgKey(INGEST_ORG),
    requests: Array.from({ length: batches * 3 }, () => ({
      method: "POST",
      path: "/api/v2/report",
      body: rejectedBody,
    })),
    concurrency: 2,
    expectStatus: 400,
  });
  const beside = await accepted(options.regions[1]);
  const stream = await rejected;
  const phase = (r: typeof alone) => ({
    ...phaseOf(batches * batchSize, r.latencies, r.elapsedMs),
    errors: r.errorCount,
  });
  const feedback_accepted_alone = phase(alone);
  const feedback_accepted_with_rejections = phase(beside);
  return {
    feedback_accepted_alone,
    feedback_accepted_with_rejections,
    /** Accepted throughput beside the rejected stream over alone (1 = not slowed at all). */
    feedbackRatio:
      Math.round(
        (feedback_accepted_with_rejections.recordsPerSecond /
          feedback_accepted_alone.recordsPerSecond) *
          100,
      ) / 100,
    feedbackRejectedPerSecond: Math.round(stream.latencies.length / (stream.elapsedMs / 1000)),
  };
}

export type FeedbackResults = Awaited<ReturnType<typeof feedbackSuite>>;
