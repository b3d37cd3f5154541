import { describe, expect, it } from "vitest";
import { recomputePublicDepthFlags } from "../src/services/quality-recompute.js";

/** A store whose ranges take a varying time, noting each range it is asked for. */
function recordingStore(min: number, max: number) {
  const ranges: [number, number][] = [];
  let calls = 0;
  const qualityDepth = {
    reportIdRange: async () => ({ min, max }),
    recomputeRange: async (fromId: number, toId: number) => {
      ranges.push([fromId, toId]);
      // 0 to 4 ms, unevenly: the walkers' sizes drift apart and they interleave.
      await new Promise((resolve) => setTimeout(resolve, (calls++ * 7) % 5));
      return toId - fromId;
    },
  };
  return { ranges, stores: { qualityDepth } as never };
}

describe("recomputation walkers", () => {
  it.each([1, 2, 3])("%i walker(s) reach every id exactly once", async (walkers) => {
    const { ranges, stores } = recordingStore(17, 250_016);
    const result = await recomputePublicDepthFlags(stores, { walkers, targetMs: 2 });
    const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
    expect(sorted[0]?.[0]).toBe(17);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]?.[0]).toBe(sorted[i - 1]?.[1]);
    const last = sorted.at(-1) ?? [0, 0];
    expect(last[0]).toBeLessThanOrEqual(250_016);
    expect(last[1]).toBeGreaterThan(250_016);
    expect(result.batches).toBe(ranges.length);
    expect(result.changed).toBe(last[1] - 17);
  });

  it("stops every walker when one range fails, and returns once none runs", async () => {
    let calls = 0;
    const qualityDepth = {
      reportIdRange: async () => ({ min: 1, max: 1_000_000 }),
      recomputeRange: async () => {
        calls++;
        await new Promise((resolve) => setTimeout(resolve, 1));
        if (calls === 3) throw new Error("range failed");
        return 0;
      },
    };
    await expect(
      recomputePublicDepthFlags({ qualityDepth } as never, { walkers: 2 }),
    ).rejects.toThrow("range failed");
    expect(calls).toBeLessThanOrEqual(4);
  });
});
