import { describe, expect, it, vi } from "vitest";
import { WindowCounter } from "../../src/http/abuse/window-counter.js";

describe("WindowCounter when its table is full", () => {
  it("counts new keys in one shared overflow entry and refuses them past its limit", () => {
    const counter = new WindowCounter(2, 1_000, 2);
    expect(counter.hit("a", 0).allowed).toBe(true);
    expect(counter.hit("b", 0).allowed).toBe(true);
    // No room for c, d, e: they share one budget of 2.
    expect(counter.hit("c", 10).allowed).toBe(true);
    expect(counter.hit("d", 10).allowed).toBe(true);
    expect(counter.hit("e", 10)).toEqual({ allowed: false, remaining: 0, resetAt: 1_010 });
    expect(counter.exhaustedUntil("f", 20)).toBe(1_010);
    expect(counter.size).toBe(2);
    // The keys with entries of their own keep their own budgets.
    expect(counter.hit("a", 20).allowed).toBe(true);
    expect(counter.exhaustedUntil("b", 20)).toBeUndefined();
  });

  it("sweeps expired entries at most once per window", () => {
    const sweep = vi.spyOn(WindowCounter.prototype as unknown as { sweep(): void }, "sweep");
    try {
      const counter = new WindowCounter(1_000_000, 1_000, 3);
      for (const key of ["a", "b", "c"]) counter.hit(key, 0);
      for (let i = 0; i < 1_000; i++) counter.hit(`new-${i}`, 500 + (i % 400));
      expect(sweep).toHaveBeenCalledTimes(1);
      // a, b, c expired at 1,000 but the last sweep was at 500: the next one comes at 1,500.
      expect(counter.hit("late", 1_200).resetAt).toBe(1_500);
      expect(counter.size).toBe(3);
      expect(counter.hit("later", 1_500).resetAt).toBe(2_500);
      expect(sweep).toHaveBeenCalledTimes(2);
      expect(counter.size).toBe(1);
    } finally {
      sweep.mockRestore();
    }
  });
});
