import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { v2Record } from "./helpers/fixture.js";
import { submit } from "./helpers/submission.js";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: "2" } });
});
afterAll(async () => t?.close());

describe("rate limit of submissions", () => {
  it("a submission over the per-key limit is a 429 that states the limit and when to retry", async () => {
    const body = { data: [v2Record({ date: "2024-01-05" })] };
    const headers = { "x-dry-run": "true" };
    expect((await submit(t, 2, body, { headers })).statusCode).toBe(201);
    expect((await submit(t, 2, body, { headers })).statusCode).toBe(201);
    const limited = await submit(t, 2, body, { headers });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers["retry-after"]).toBeDefined();
    expect(limited.json()).toEqual({
      statusCode: 429,
      error: "Too Many Requests",
      message: expect.stringMatching(/^Rate limit exceeded: 2 requests per minute; retry in /),
    });
  });
});
