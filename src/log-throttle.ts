/**
 * What to log of a failure that may repeat many times a second (every request during a
 * database outage, a job every few seconds): the whole error, with its stack, at most once
 * per `everyMs`; in between only its message, and the next whole one says how many came
 * between (`repeats`). An outage then logs a stack every `everyMs`, not one per request.
 */
export function throttledErrors(everyMs: number, now: () => number = Date.now) {
  let lastWholeAt = Number.NEGATIVE_INFINITY;
  let since = 0;
  return (err: unknown): ErrorLogFields => {
    const at = now();
    if (at - lastWholeAt < everyMs) {
      since++;
      return { whole: false, fields: { reason: err instanceof Error ? err.message : String(err) } };
    }
    lastWholeAt = at;
    const repeats = since;
    since = 0;
    return { whole: true, fields: repeats > 0 ? { err, repeats } : { err } };
  };
}

export type ErrorLogFields = {
  /** True when `fields` hold the whole error (`err`), false when only its message (`reason`). */
  whole: boolean;
  fields: { err: unknown; repeats?: number } | { reason: string };
};

/** `write` of a repeating failure's whole error at most once per `everyMs`; the rest dropped. */
export function quietly(everyMs: number, write: (fields: ErrorLogFields["fields"]) => void) {
  const throttle = throttledErrors(everyMs);
  return (error: unknown) => {
    const { whole, fields } = throttle(error);
    if (whole) write(fields);
  };
}
