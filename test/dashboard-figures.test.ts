import { describe, expect, it } from "vitest";
import { figure, groupedFigure, medianFigure } from "../src/http/dashboard/views/market-links.js";

describe("figures on the dashboard", () => {
  it("shows a computed median as the decimal it stands for, not its binary noise", () => {
    expect(medianFigure(183875.90500000003)).toBe("183,875.905");
    expect(medianFigure(0.06445000000000001)).toBe("0.06445");
    expect(medianFigure(193643.34999999998)).toBe("193,643.35");
    expect(medianFigure(250000)).toBe("250,000");
    expect(medianFigure(null)).toBe("–");
  });

  it("shows a submitted figure in a chart's table with every digit it was submitted with, grouped by thousands", () => {
    expect(figure(1234567.8901234567)).toBe("1,234,567.8901234567");
    expect(figure(0.1 + 0.2)).toBe("0.30000000000000004");
    expect(figure(0.0999)).toBe("0.0999");
    expect(figure(undefined)).toBe("–");
  });

  it("shows a submitted figure with every decimal it was submitted with, grouped by thousands", () => {
    expect(groupedFigure(0.0999)).toBe("0.0999");
    expect(groupedFigure(0.2501)).toBe("0.2501");
    expect(groupedFigure(1234567.125)).toBe("1,234,567.125");
    expect(groupedFigure(-1234.5)).toBe("-1,234.5");
    expect(groupedFigure(999)).toBe("999");
    expect(groupedFigure(12345678901234.56)).toBe("12,345,678,901,234.56");
    expect(groupedFigure(undefined)).toBe("—");
  });
});
