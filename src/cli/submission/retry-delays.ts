import { backoffMs } from "../../retry.js";
import { IDEMPOTENCY_LEASE_MS } from "../../services/idempotency.js";

const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 30_000;
/**
 * A 409 says an earlier attempt of the batch still holds its Idempotency-Key: the service lets
 * the key go, or answers it, within its lease. Retried until the waits cover the lease (with a
 * margin), apart from the retries of other failures, and at most this long between two tries.
 */
const IN_FLIGHT_WAIT_MS = IDEMPOTENCY_LEASE_MS + 5_000;
const MAX_IN_FLIGHT_DELAY_MS = 5_000;

/** A retryable outcome of one attempt: an answer's status (and Retry-After), or none. */
type Failure = { status?: number; retryAfterMs?: number };

/**
 * The wait before each retry of one batch, or undefined once its budget is spent: a 409 has
 * IN_FLIGHT_WAIT_MS of waits, every other failure `maxRetries` retries with back-off.
 */
export function batchRetryDelays(maxRetries: number): (failure: Failure) => number | undefined {
  const spent = { retries: 0, inFlightMs: 0, inFlightRetries: 0 };
  return (failure) => {
    if (failure.status === 409) {
      const left = IN_FLIGHT_WAIT_MS - spent.inFlightMs;
      if (left <= 0) return undefined;
      const limits = { baseMs: BASE_DELAY_MS, capMs: MAX_IN_FLIGHT_DELAY_MS };
      const delay = Math.min(
        left,
        failure.retryAfterMs ?? backoffMs(++spent.inFlightRetries, limits),
      );
      spent.inFlightMs += delay;
      return delay;
    }
    if (++spent.retries > maxRetries) return undefined;
    const backoff = backoffMs(spent.retries, { baseMs: BASE_DELAY_MS, capMs: MAX_DELAY_MS });
    return failure.retryAfterMs ?? backoff;
  };
}
