const TRANSIENT_CODES = new Set([
  "40001", // serialization_failure
  "40P01", // deadlock_detected
]);
const MAX_ATTEMPTS = 4;

/**
 * Runs `work` again when PostgreSQL aborted it for a conflict with a concurrent transaction,
 * a bounded number of times with a short random back-off, so that such conflicts never reach
 * a client. Other errors pass through at once.
 */
export async function withTransientRetry<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS || !isTransient(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 5 * attempt + Math.random() * 20));
    }
  }
}

function isTransient(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && TRANSIENT_CODES.has(code);
}
