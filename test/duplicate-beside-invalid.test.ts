/**
 * CONTRACT 2: "Validation reports every problem of the batch at once, in record order" and
 * "Two records of one batch with the same key: 400, path data.N ... Duplicate record key
 * (same as data.M)". A record whose identity (date, exchange, base, quote, instrument type) is
 * valid but one of whose metrics is out of range still has a key: a later record with that key
 * is a duplicate, and the first 400 must say so (else the client fixes the metric, sends again,
 * and only then learns of the duplicate).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { v2Record } from "./helpers/fixture.js";
import { problemsOf, submit } from "./helpers/submission.js";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ now: () => new Date("2025-06-15T12:00:00Z") });
});
afterAll(async () => t?.close());

it("lists the duplicate key beside the first record's metric problem, in one answer", async () => {
  const first = await submit(t, 2, { data: [v2Record({ bidDepth50: -1 }), v2Record()] });
  expect(problemsOf(first)).toEqual([
    { path: "data.0.bidDepth50", message: "Number must be greater than or equal to 0" },
    { path: "data.1", message: "Duplicate record key (same as data.0)" },
  ]);
});

it("names the FIRST record with the key, even when that record has another problem", async () => {
  const r = await submit(t, 2, {
    data: [v2Record({ topOfBookPercentage: 101 }), v2Record(), v2Record()],
  });
  expect(problemsOf(r)).toContainEqual({
    path: "data.2",
    message: "Duplicate record key (same as data.0)",
  });
});
