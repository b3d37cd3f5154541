import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { baseFixture, KEYS, v2Record } from "./helpers/fixture.js";
import { insertObligation, setOrganizationKind } from "./helpers/obligations.js";
import { submit } from "./helpers/submission.js";

const INITECH_KEY = "initech-key-0123456789abcdef0123456789";
const PROJECT_KEY = "umbrella-key-0123456789abcdef0123456789";
let clock = new Date("2026-10-02T10:00:00Z");
let t: TestApp;

const card = async (key = KEYS.acme, month = "2026-10") =>
  t.request({ method: "GET", url: `/api/v1/report-card?month=${month}`, key });

/** Submits at `at` (the service's clock) as `key`; returns the status. */
async function submitAt(at: string, key: string, data: unknown[], dryRun = false) {
  clock = new Date(at);
  const response = await submit(
    t,
    2,
    { data },
    { key, headers: dryRun ? { "x-dry-run": "true" } : {} },
  );
  return response.statusCode;
}

beforeAll(async () => {
  const fixture = baseFixture();
  fixture.organizations?.push({
    id: "initech",
    name: "Initech",
    apiKeys: [INITECH_KEY],
    engagements: [{ baseCoinId: "chainlink", type: "project", since: "2024-01-01", until: null }],
  });
  fixture.organizations?.push({
    id: "umbrella",
    name: "Umbrella (a token project)",
    apiKeys: [PROJECT_KEY],
    engagements: [],
  });
  t = await startTestApp({ fixture, now: () => clock });
  await setOrganizationKind(t.database.db, "umbrella", "project", ["chainlink"]);
  // A project's refused attempt is in its own log: no market maker's figures, no peer.
  expect(await submitAt("2026-10-04T09:00:00Z", PROJECT_KEY, [v2Record()])).toBe(403);
  await insertObligation(t.database.db, {
    organizationId: "acme",
    baseCoinId: "chainlink",
    since: "2026-10-01",
    until: "2026-10-03",
    markets: [{ exchangeId: "binance", quote: "tether", instrumentType: "spot" }],
    kpis: {},
  });
  // Acme's October: 10-01 on time and corrected after its deadline, 10-02 late, 10-03 missing,
  // one rejected batch of two records; a dry run and a November submission that do not count.
  expect(
    await submitAt("2026-10-02T10:00:00Z", KEYS.acme, [v2Record({ date: "2026-10-01" })]),
  ).toBe(201);
  expect(
    await submitAt("2026-10-03T13:00:00Z", KEYS.acme, [v2Record({ date: "2026-10-02" })]),
  ).toBe(201);
  expect(
    await submitAt("2026-10-05T09:00:00Z", KEYS.acme, [
      v2Record({ date: "2026-10-01", bidDepth50: 1 }),
    ]),
  ).toBe(201);
  expect(
    await submitAt("2026-10-06T09:00:00Z", KEYS.acme, [
      v2Record({ date: "2026-10-04", baseCoinId: "nope" }),
      v2Record({ date: "2026-10-06" }),
    ]),
  ).toBe(400);
  expect(await submitAt("2026-10-07T09:00:00Z", KEYS.acme, [], true)).toBe(400);
  expect(await submitAt("2026-11-01T00:30:00Z", KEYS.acme, [])).toBe(400);
  clock = new Date("2026-11-23T12:00:00Z");
});
afterAll(async () => t?.close());

const ACME_OCTOBER = {
  organizationId: "acme",
  month: "2026-10",
  submissions: 4,
  rejectedSubmissions: 1,
  recordsAccepted: 3,
  recordsRejected: 2,
  problemsByCode: { date_not_past: 1, unknown_base_coin: 1 },
  problemsByField: { baseCoinId: 1, date: 1 },
  reportsDue: 3,
  reportsMissing: 1,
  reportsLate: 1,
  correctionsAfterDeadline: 1,
  // The correction's bidDepth50 of 1: below its 25 bps band, and no longer half its total.
  qualityFlags: { depth_not_monotonic: 1, total_depth_mismatch: 1 },
};

describe("GET /api/v1/report-card", () => {
  it("adds up a hand-built month and withholds the peer medians below 3 market makers", async () => {
    const response = await card();
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({
      ...ACME_OCTOBER,
      rates: {
        rejectedSubmissions: { value: 0.25, peerMedian: null },
        rejectedRecords: { value: 0.4, peerMedian: null },
        missingReports: { value: 0.3333, peerMedian: null },
        lateReports: { value: 0.3333, peerMedian: null },
        correctionsAfterDeadline: { value: 0.5, peerMedian: null },
      },
      peers: {
        marketMakers: 1,
        mediansShown: false,
        note: "Fewer than 3 market makers reported in 2026-10: peer medians are withheld so that no other organization's figures can be inferred",
      },
    });
  });

  it("shows each median once 3 market makers report, where 3 of them have the rate", async () => {
    expect(
      await submitAt("2026-10-10T09:00:00Z", KEYS.globex, [v2Record({ date: "2026-10-09" })]),
    ).toBe(201);
    clock = new Date("2026-11-23T12:00:00Z");
    expect((await card()).json().peers.marketMakers).toBe(2);
    expect((await card()).json().rates.rejectedSubmissions.peerMedian).toBeNull();
    expect(await submitAt("2026-10-11T09:00:00Z", INITECH_KEY, [])).toBe(400);
    clock = new Date("2026-11-23T12:00:00Z");
    const response = await card();
    expect(response.json()).toMatchObject(ACME_OCTOBER);
    expect(response.json().rates).toEqual({
      rejectedSubmissions: { value: 0.25, peerMedian: 0.25 },
      rejectedRecords: { value: 0.4, peerMedian: null },
      missingReports: { value: 0.3333, peerMedian: null },
      lateReports: { value: 0.3333, peerMedian: null },
      correctionsAfterDeadline: { value: 0.5, peerMedian: null },
    });
    expect(response.json().peers).toEqual({ marketMakers: 3, mediansShown: true, note: null });
    const globex = (await card(KEYS.globex)).json();
    expect(globex).toMatchObject({ submissions: 1, recordsAccepted: 1, problemsByCode: {} });
    expect(globex.rates.rejectedSubmissions).toEqual({ value: 0, peerMedian: 0.25 });
  });

  it("defaults to the last complete month and refuses a future or malformed one", async () => {
    const defaulted = await t.request({
      method: "GET",
      url: "/api/v1/report-card",
      key: KEYS.acme,
    });
    expect(defaulted.json().month).toBe("2026-10");
    for (const [month, message] of [
      ["2026-12", "Month must not be in the future"],
      ["2026-13", "Invalid month, expected YYYY-MM"],
      ["1999-12", "Month must not be before 2000-01"],
    ]) {
      const response = await card(KEYS.acme, month);
      expect(response.statusCode).toBe(400);
      expect(response.json().message).toEqual([{ path: "month", message }]);
    }
  });

  it("is for market-maker keys only", async () => {
    await setOrganizationKind(t.database.db, "globex", "project", ["chainlink"]);
    // Whatever the month: the key's kind is judged before its query.
    for (const month of [undefined, "2026-13", "1999-01", "3000-01"]) {
      const response = await card(KEYS.globex, month);
      expect(response.statusCode, month).toBe(403);
      expect(response.json()).toEqual({
        statusCode: 403,
        error: "Forbidden",
        message: "Only market-maker keys have a report card",
      });
    }
    await setOrganizationKind(t.database.db, "globex", "market_maker");
  });
});
