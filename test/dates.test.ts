import { describe, expect, it } from "vitest";
import { isCalendarDate } from "../src/domain/dates.js";

/** The oracle: what a JavaScript Date makes of the same year, month and day. */
function dateAgrees(year: number, month: number, day: number): boolean {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return (
    date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
  );
}

const pad = (n: number, width: number) => String(n).padStart(width, "0");

describe("isCalendarDate", () => {
  it("accepts exactly the real calendar dates, leap years included, for years 0000 to 2500", () => {
    const disagreements: string[] = [];
    for (let year = 0; year <= 2500; year++) {
      for (let month = 0; month <= 13; month++) {
        for (let day = 0; day <= 32; day++) {
          const text = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
          if (isCalendarDate(text) !== dateAgrees(year, month, day)) disagreements.push(text);
        }
      }
    }
    expect(disagreements).toEqual([]);
  });

  it("refuses anything not written YYYY-MM-DD", () => {
    for (const text of [
      "2025-1-01",
      "2025-01-1",
      "25-01-01",
      "2025/01/01",
      "2025-01-01T00:00:00Z",
      "",
    ])
      expect(isCalendarDate(text), text).toBe(false);
  });
});
