import type { WebhookEvent } from "../domain/webhook-event.js";
import type { Stores } from "../store/stores.js";
import type { RejectedSubmission } from "../store/submission-store.js";

/** A rejected submission to log, with its `submission.rejected` event (none for a dry run). */
export type LoggedRejection = { entry: RejectedSubmission; event: WebhookEvent | undefined };

type Waiting = LoggedRejection & { done(): void; failed(error: unknown): void };

/** At most this many rejections go in one statement. */
const MAX_PER_WRITE = 64;

/**
 * The writer of rejected submissions, one per process. Each caller waits until its entry has
 * committed (the answer goes out only once the submission is on record), but the rejections
 * are written one transaction at a time: those that arrive meanwhile wait and go together in
 * the next one (one statement for their log rows, one for their events, one commit). So a
 * stream of rejected submissions holds at most one database connection and one commit at a
 * time, whatever its rate, and cannot crowd accepted batches out of the pool; it is the
 * rejected submissions' answers that wait.
 */
export function createRejectionLog(deps: { stores: Stores; now: () => Date }) {
  const queue: Waiting[] = [];
  let writing = false;

  const write = async (batch: readonly LoggedRejection[]) => {
    const events = batch.flatMap((r) => (r.event === undefined ? [] : [r.event]));
    await deps.stores.transaction(async (tx) => {
      await tx.submissions.recordRejected(batch.map((r) => r.entry));
      await tx.webhookEvents.publish(events, deps.now());
    });
  };

  const drain = async () => {
    writing = true;
    try {
      while (queue.length > 0) {
        const batch = queue.splice(0, MAX_PER_WRITE);
        try {
          await write(batch);
          for (const waiting of batch) waiting.done();
        } catch (error) {
          // One bad entry must not cost the others their record: each goes again alone.
          if (batch.length === 1) batch[0]?.failed(error);
          else await writeEachAlone(batch);
        }
      }
    } finally {
      writing = false;
    }
  };

  const writeEachAlone = async (batch: readonly Waiting[]) => {
    for (const waiting of batch) {
      try {
        await write([waiting]);
        waiting.done();
      } catch (error) {
        waiting.failed(error);
      }
    }
  };

  return {
    /** Resolves once the rejection (and its event) committed; rejects if it could not be. */
    record(rejection: LoggedRejection): Promise<void> {
      return new Promise((resolve, reject) => {
        queue.push({ ...rejection, done: resolve, failed: reject });
        if (!writing) void drain();
      });
    },
  };
}

export type RejectionLog = ReturnType<typeof createRejectionLog>;
