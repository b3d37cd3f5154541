import { describe, expect, it } from "vitest";
import { backoffMs, retryAfterMs, retrying, settled } from "../src/retry.js";

describe("Retry-After", () => {
  const now = Date.parse("2026-11-23T12:00:00Z");
  it.each([
    [null, undefined],
    ["", undefined],
    ["soon", undefined],
    ["5", 5_000],
    ["0", 0],
    ["-3", 0],
    ["100000", 60_000],
    ["Mon, 23 Nov 2026 12:00:30 GMT", 30_000],
    ["Mon, 23 Nov 2026 11:00:00 GMT", 0],
  ])("%j waits %j ms (cap 60 s)", (header, ms) => {
    expect(retryAfterMs(header, 60_000, now)).toBe(ms);
  });
});

describe("the retry loop", () => {
  it("doubles the back-off up to its cap", () => {
    const limits = { baseMs: 500, capMs: 3_000 };
    expect([1, 2, 3, 4, 5].map((n) => backoffMs(n, limits))).toEqual([500, 1000, 2000, 3000, 3000]);
  });

  it("stops at the first final outcome and counts the attempts", async () => {
    const outcomes = [503, 503, 201, 503];
    const waits: number[] = [];
    const { outcome, attempts } = await retrying(async () => outcomes.shift() ?? 0, {
      retries: 5,
      delayMs: (status, retry) => (status === 503 ? retry * 10 : undefined),
      onRetry: (_status, _retry, ms) => waits.push(ms),
      sleep: async () => {},
    });
    expect({ outcome, attempts, waits }).toEqual({ outcome: 201, attempts: 3, waits: [10, 20] });
  });

  it("gives up after the retries, with the last outcome", async () => {
    let calls = 0;
    const { outcome, attempts } = await retrying(
      () =>
        settled(async () => {
          calls++;
          throw new Error(`failure ${calls}`);
        }),
      { retries: 2, delayMs: () => 0, sleep: async () => {} },
    );
    expect(attempts).toBe(3);
    expect(outcome.ok ? undefined : (outcome.error as Error).message).toBe("failure 3");
  });
});
