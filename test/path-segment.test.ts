import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeSegment, encodeSegment } from "../src/http/dashboard/path-segment.js";

describe("dashboard path segments", () => {
  const resolvedByBrowsers = new Set([".", "..", "%2E", "%2E%2E", ".%2E", "%2E."]);
  const dotty = fc.constantFrom(".", "..", "~.", "~..", "~~.", "~", "~x", "...", ". .");

  it("give every value back, and never one a browser resolves as . or ..", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "grapheme" }), dotty), (value) => {
        const segment = encodeSegment(value);
        expect(resolvedByBrowsers.has(segment.toUpperCase())).toBe(false);
        expect(decodeSegment(decodeURIComponent(segment))).toBe(value);
      }),
    );
  });

  it("leave every other value as its percent-encoding", () => {
    expect(encodeSegment("tether")).toBe("tether");
    expect(encodeSegment("x/y?#z")).toBe("x%2Fy%3F%23z");
    expect(encodeSegment("~x")).toBe("~x");
    expect(encodeSegment("...")).toBe("...");
    expect(encodeSegment("..")).toBe("~..");
    expect(encodeSegment("~.")).toBe("~~.");
  });
});
