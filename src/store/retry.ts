import { retrying, settled } from "../retry.js";
import { LOST_STATEMENT_CODES } from "./prepared-statements.js";

const TRANSIENT_CODES = new Set([
  "40001", // serialization_failure
  "40P01", // deadlock_detected
  // A named statement lost behind a transaction pooler: nothing ran, and the retry goes unnamed.
  ...LOST_STATEMENT_CODES,
]);
const RETRIES = 3;

/**
 * Runs `work` again when PostgreSQL aborted it for a conflict with a concurrent transaction
 * (or refused a named statement a pooler lost, prepared-statements.ts), a bounded number of
 * times with a short random back-off, so that such conflicts never reach a client. Other
 * errors pass through at once.
 */
export async function withTransientRetry<T>(work: () => Promise<T>): Promise<T> {
  const { outcome } = await retrying(() => settled(work), {
    retries: RETRIES,
    delayMs: (o, retry) =>
      !o.ok && isTransient(o.error) ? 5 * retry + Math.random() * 20 : undefined,
  });
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

function isTransient(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && TRANSIENT_CODES.has(code);
}
