import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { baseFixture, KEYS, v2Record } from "./helpers/fixture.js";
import { submit } from "./helpers/submission.js";

// correctionsAfterDeadline counts versions over reports: a report corrected twice after its
// deadline makes a rate of 2, which the answer's schema (a share, at most 1) refused with a
// 500, for the market maker and, through the peer median, for every other one that month.
const INITECH_KEY = "initech-key-0123456789abcdef0123456789";
let clock = new Date("2025-03-02T08:00:00Z");
let t: TestApp;

async function submitAt(key: string, at: string, bidDepth200: number) {
  clock = new Date(at);
  const response = await submit(
    t,
    2,
    { data: [v2Record({ date: "2025-03-01", bidDepth200 })] },
    { key },
  );
  expect(response.statusCode, response.body).toBe(201);
}

beforeAll(async () => {
  const fixture = baseFixture();
  fixture.organizations?.push({
    id: "initech",
    name: "Initech",
    apiKeys: [INITECH_KEY],
    engagements: [{ baseCoinId: "chainlink", type: "project", since: "2024-01-01", until: null }],
  });
  t = await startTestApp({ fixture, now: () => clock });
  for (const key of [KEYS.acme, KEYS.globex]) {
    await submitAt(key, "2025-03-02T08:00:00Z", 6000);
    await submitAt(key, "2025-03-05T08:00:00Z", 6100);
    await submitAt(key, "2025-03-06T08:00:00Z", 6200);
  }
  await submitAt(INITECH_KEY, "2025-03-02T08:00:00Z", 6000);
  clock = new Date("2025-04-15T00:00:00Z");
});
afterAll(async () => t?.close());

const card = (key: string) =>
  t.request({ method: "GET", url: "/api/v1/report-card?month=2025-03", key });

describe("the report card's correctionsAfterDeadline rate above 1", () => {
  it("answers a market maker with more corrections than reports", async () => {
    const response = await card(KEYS.acme);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().correctionsAfterDeadline).toBe(2);
    expect(response.json().rates.correctionsAfterDeadline).toEqual({ value: 2, peerMedian: 2 });
  });

  it("answers a market maker that corrected nothing, whatever its peers' median", async () => {
    const response = await card(INITECH_KEY);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().rates.correctionsAfterDeadline).toEqual({ value: 0, peerMedian: 2 });
  });
});
