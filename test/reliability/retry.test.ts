import { describe, expect, it } from "vitest";
import { withTransientRetry } from "../../src/store/retry.js";

/** The bounded retry behind "no deadlock or serialization failure reaches a client". */

const failure = (code: string) => Object.assign(new Error(`sqlstate ${code}`), { code });

function flaky(failures: unknown[]) {
  let calls = 0;
  return {
    calls: () => calls,
    work: async () => {
      const error = failures[calls++];
      if (error !== undefined) throw error;
      return "done";
    },
  };
}

describe("withTransientRetry", () => {
  it("runs the work again after a deadlock or a serialization failure", async () => {
    const f = flaky([failure("40P01"), failure("40001"), failure("40P01")]);
    await expect(withTransientRetry(f.work)).resolves.toBe("done");
    expect(f.calls()).toBe(4);
  });

  it("gives up after 4 attempts and passes the last error on", async () => {
    const f = flaky(Array.from({ length: 10 }, () => failure("40P01")));
    await expect(withTransientRetry(f.work)).rejects.toMatchObject({ code: "40P01" });
    expect(f.calls()).toBe(4);
  });

  it("never retries other errors (a retry could not help, or would hide a bug)", async () => {
    for (const error of [failure("23505"), failure("57P01"), new Error("boom"), "text"]) {
      const f = flaky([error]);
      await expect(withTransientRetry(f.work)).rejects.toBe(error);
      expect(f.calls()).toBe(1);
    }
  });
});
