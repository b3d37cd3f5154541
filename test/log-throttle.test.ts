import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { UnavailableError } from "../src/domain/errors.js";
import { buildApp } from "../src/http/app.js";
import { quietly, throttledErrors } from "../src/log-throttle.js";
import type { Services } from "../src/services/index.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS } from "./helpers/fixture.js";

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("a failure that repeats", () => {
  it("is logged whole once per period, its message in between, then how many came between", () => {
    let now = 0;
    const fields = throttledErrors(10_000, () => now);
    const down = new Error("connect ECONNREFUSED");
    expect(fields(down)).toEqual({ whole: true, fields: { err: down } });
    now = 9_999;
    expect(fields(down)).toEqual({ whole: false, fields: { reason: "connect ECONNREFUSED" } });
    expect(fields("not an Error")).toEqual({ whole: false, fields: { reason: "not an Error" } });
    now = 10_000;
    expect(fields(down)).toEqual({ whole: true, fields: { err: down, repeats: 2 } });
    now = 30_000;
    expect(fields(down)).toEqual({ whole: true, fields: { err: down } });
  });

  it("drops the repeats of a job's failure between whole ones", () => {
    const written: unknown[] = [];
    const onError = quietly(60_000, (fields) => written.push(fields));
    for (let i = 0; i < 5; i++) onError(new Error(`turn ${i}`));
    expect(written).toEqual([{ err: new Error("turn 0") }]);
  });

  it("a database outage logs one stack, not one per 503", async () => {
    t = await startTestApp();
    const lines: Record<string, unknown>[] = [];
    const stream = { write: (line: string) => lines.push(JSON.parse(line)) };
    const services: Services = {
      ...t.services,
      listExchanges: async () => {
        throw new UnavailableError("database", { cause: new Error("connect ECONNREFUSED") });
      },
    };
    const app = await buildApp({
      services,
      http: loadConfig({}).http,
      logger: { level: "warn", stream },
    });
    try {
      for (let i = 0; i < 5; i++) {
        const answer = await app.inject({
          method: "GET",
          url: "/api/v1/exchanges",
          headers: { authorization: KEYS.acme },
        });
        expect(answer.statusCode).toBe(503);
      }
    } finally {
      await app.close();
    }
    const unavailable = lines.filter((line) => line.msg === "dependency unavailable");
    expect(unavailable).toHaveLength(5);
    expect(unavailable.filter((line) => line.err !== undefined)).toHaveLength(1);
  });
});
