import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { parallelismOf } from "../src/system.js";

const POSTGRES = { DATABASE_URL: "postgres://postgres@127.0.0.1:5432/postgres" };

describe("DB_QUERY_PARALLELISM: connections one scorecard request may use at once", () => {
  it("is 2 by default on PostgreSQL, and 1 on PGlite's single connection", () => {
    expect(parallelismOf(loadConfig(POSTGRES))).toBe(2);
    expect(parallelismOf(loadConfig({}))).toBe(1);
    expect(parallelismOf(loadConfig({ DB_QUERY_PARALLELISM: "4" }))).toBe(1);
  });

  it("takes the configured number, at most half of the pool", () => {
    expect(parallelismOf(loadConfig({ ...POSTGRES, DB_QUERY_PARALLELISM: "4" }))).toBe(4);
    expect(parallelismOf(loadConfig({ ...POSTGRES, DB_QUERY_PARALLELISM: "1" }))).toBe(1);
    const capped = { ...POSTGRES, DB_QUERY_PARALLELISM: "8", DB_POOL_SIZE: "6" };
    expect(parallelismOf(loadConfig(capped))).toBe(3);
    const tiny = { ...POSTGRES, DB_POOL_SIZE: "1" };
    expect(parallelismOf(loadConfig(tiny))).toBe(1);
  });

  it("refuses what is not a positive integer, naming the variable", () => {
    for (const value of ["0", "-2", "1.5", "two"]) {
      expect(() => loadConfig({ ...POSTGRES, DB_QUERY_PARALLELISM: value })).toThrow(ConfigError);
      expect(() => loadConfig({ ...POSTGRES, DB_QUERY_PARALLELISM: value })).toThrow(
        /DB_QUERY_PARALLELISM/,
      );
    }
  });
});
