/** What `serve` does with SIGTERM and SIGINT, from its first moment (CONTRACT section 1). */
export type StopSignals = ReturnType<typeof stopSignals>;

/**
 * SIGTERM and SIGINT from the first moment of `serve`: the first one asks for a stop (read
 * through `requested` while starting, then handed to `whenRequested`); the handlers go with
 * it, so a second signal ends the process at once, as an impatient operator expects.
 */
export function stopSignals() {
  let requested = false;
  let onStop: (() => void) | undefined;
  const signal = () => {
    dispose();
    requested = true;
    onStop?.();
  };
  const dispose = () => {
    process.off("SIGTERM", signal);
    process.off("SIGINT", signal);
  };
  process.on("SIGTERM", signal);
  process.on("SIGINT", signal);
  return {
    get requested() {
      return requested;
    },
    /** Runs `stop` on the stop asked for, now if it already was. */
    whenRequested(stop: () => void) {
      onStop = stop;
      if (requested) stop();
    },
    dispose,
    /** For a start that failed: the handlers go, and the error goes on. */
    disposeAndRethrow(error: unknown): never {
      dispose();
      throw error;
    },
  };
}

/**
 * Runs the steps before serving in order, unless a stop is asked for meanwhile: the step in
 * hand finishes (each loads in a transaction of its own) and the rest are skipped. Resolves
 * whether every step ran; after a stop, or a failure (rethrown), `close` has run.
 */
export async function startUnlessStopped(
  steps: readonly (() => unknown)[],
  signals: StopSignals,
  close: () => Promise<void>,
): Promise<boolean> {
  try {
    for (const step of steps) if (!signals.requested) await step();
  } catch (error) {
    signals.dispose();
    await close();
    throw error;
  }
  if (!signals.requested) return true;
  await close();
  return false;
}
