import fc from "fast-check";
import { expect } from "vitest";

/** Every response is a 2xx, or a 4xx in the specified shape; never a 5xx. */
export function expectSpecifiedShape(response: {
  statusCode: number;
  body: string;
  json(): unknown;
}) {
  expect(response.statusCode).toBeLessThan(500);
  if (response.statusCode < 400) return;
  const body = response.json() as Record<string, unknown>;
  expect(body.statusCode).toBe(response.statusCode);
  if (response.statusCode === 400) {
    expect(body.error).toBe("Bad Request");
    expect(Array.isArray(body.message)).toBe(true);
    for (const problem of body.message as Record<string, unknown>[]) {
      expect(typeof problem.message).toBe("string");
      if ("path" in problem) expect(typeof problem.path).toBe("string");
    }
  } else {
    expect(typeof body.message).toBe("string");
  }
  expect(response.body).not.toMatch(/\bat .*\.(ts|js):\d+|select |insert into|stack/i);
}

export const oddStrings = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "💥".repeat(50),
    "a".repeat(5000),
    "binance",
    "chainlink",
    "2025-02-29",
    "1e309",
  ),
);
