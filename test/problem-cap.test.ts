import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { capProblems, type Problem, unlistedProblems } from "../src/domain/errors.js";

// The service writes the cap's last entry and `trading-reports submit` reads it back: one
// pair of functions, so the two cannot drift apart.
describe("the problem cap", () => {
  it("says how many problems were left out, and the CLI's reading gets that number back", () => {
    fc.assert(
      fc.property(fc.nat(50), fc.nat(400), (max, extra) => {
        const problems: Problem[] = Array.from({ length: max + extra }, (_, i) => ({
          path: `data.${i}.spread`,
          message: "Number must be greater than 0",
        }));
        const capped = capProblems(problems, max);
        const last = capped.at(-1);
        if (extra === 0) {
          expect(capped).toBe(problems);
          return;
        }
        expect(capped).toHaveLength(max + 1);
        expect(last && unlistedProblems(last)).toBe(extra);
        for (const listed of capped.slice(0, -1)) expect(unlistedProblems(listed)).toBeUndefined();
      }),
    );
  });

  it("reads nothing from a problem that names a record, or says something else", () => {
    expect(unlistedProblems({ path: "data.0", message: "… and 3 more problems" })).toBeUndefined();
    expect(unlistedProblems({ message: "… and three more problems" })).toBeUndefined();
    expect(unlistedProblems({ message: "Required" })).toBeUndefined();
  });
});
