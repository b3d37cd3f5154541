import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebhookJob } from "../src/jobs/webhook-deliveries.js";
import type { WebhookEventProducer } from "../src/jobs/webhook-event-producer.js";
import { loadFixture } from "../src/services/fixtures.js";
import type { VersionsRead } from "../src/store/webhook-producer-rows.js";
import { accountabilityFixture, READER_KEYS } from "./helpers/accountability.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Record } from "./helpers/fixture.js";
import { testDeliveries, testProducer } from "./helpers/webhook-jobs.js";
import { eventually, type Receiver, startReceiver, verified } from "./helpers/webhook-receiver.js";

/**
 * quality.flagged (CONTRACT sections 6 and 7): derived by the producer job from the flags of
 * stored versions and from recomputations of exceeds_public_depth, delivered signed to a
 * receiver on loopback, to the market maker, the projects owning the coin and the operator.
 */
let t: TestApp;
let receiver: Receiver;
let job: WebhookJob;
let producer: WebhookEventProducer;
let clock = new Date("2026-03-03T08:00:00Z");
const secrets: Record<string, string> = {};

/** Who subscribes, with which key: each gets its own path on the receiver. */
const SUBSCRIBERS = {
  acme: KEYS.acme,
  globex: KEYS.globex,
  "chainlink-labs": READER_KEYS.chainlinkLabs,
  "uniswap-labs": READER_KEYS.uniswapLabs,
  platform: READER_KEYS.operator,
};

async function submit(key: string, records: Record<string, unknown>[]) {
  const response = await t.request({
    method: "POST",
    url: "/api/v2/report",
    key,
    payload: { data: records },
  });
  expect(response.statusCode, response.body).toBe(201);
}

/** Flagged total_depth_mismatch: the total is not the sum of its sides. */
const mismatched = (date: string) => v2Record({ date, bidAskDepth200: 1 });
/** ±2 % depth 6000 / 6100, consistent: flagged only against a smaller public book. */
const plausible = (date: string) => v2Record({ date });

const snapshot = (date: string, takenAt: string, costToMoveDownUsd: number) => ({
  exchangeId: "binance",
  baseCoinId: "chainlink",
  quoteSymbol: "USDT",
  date,
  takenAt,
  costToMoveDownUsd,
});
const loadSnapshots = (snapshots: unknown[]) =>
  loadFixture(t.database.stores, { depthSnapshots: snapshots }, new Date());

/** What the producer's next pass would read of the versions (in a transaction rolled back). */
async function versionsAPassWouldRead(): Promise<VersionsRead> {
  const rolledBack = new Error("rolled back");
  let read: VersionsRead | undefined;
  await t.database.stores
    .transaction(async (tx) => {
      read = await tx.webhookProducer.versionsToJudge(5_000);
      throw rolledBack;
    })
    .catch((error: unknown) => {
      if (error !== rolledBack) throw error;
    });
  if (read === undefined) throw new Error("nothing read");
  return read;
}

/** A pass of the producer, a minute after the last one. */
function pass() {
  clock = new Date(clock.getTime() + 60_000);
  return producer.runOnce(clock);
}

type Flagged = { date: string; flags: string[] };
/** The quality.flagged events recorded, oldest first. */
async function flagged(): Promise<Flagged[]> {
  const r = await sql<{ data: Flagged }>`
    select data from webhook_events where type = 'quality.flagged'
    order by created_at, dedup_key`.execute(t.database.db);
  return r.rows.map(({ data }) => ({ date: data.date, flags: data.flags }));
}

beforeAll(async () => {
  t = await startTestApp({
    fixture: accountabilityFixture(),
    env: { WEBHOOK_ALLOW_INSECURE: "true" },
    now: () => clock,
  });
  receiver = await startReceiver();
  for (const [organization, key] of Object.entries(SUBSCRIBERS)) {
    const created = await t.request({
      method: "POST",
      url: "/api/v1/webhooks",
      key,
      payload: { url: receiver.url(`/${organization}`), events: ["quality.flagged"] },
    });
    expect(created.statusCode, created.body).toBe(201);
    secrets[organization] = created.json().secret;
  }
  producer = testProducer(t.database.stores, () => clock);
  // Flagged before notifications first ran: a stored version and a recomputed report.
  await submit(KEYS.acme, [mismatched("2026-02-01"), plausible("2026-02-02")]);
  await loadSnapshots([snapshot("2026-02-02", "2026-02-02T10:00:00Z", 1000)]);
  job = testDeliveries(t.database.stores);
});
afterAll(async () => {
  await job?.stop();
  await receiver?.close();
  await t?.close();
});

describe("quality.flagged", () => {
  it("announces nothing flagged before notifications first ran", async () => {
    expect(await pass()).toBe(0);
    expect(await flagged()).toEqual([]);
  });

  it("is raised by a flagged version on arrival, signed, for the coin's readers only", async () => {
    await submit(KEYS.acme, [mismatched("2026-03-02"), plausible("2026-03-01")]);
    expect(await pass()).toBe(1);
    expect(await flagged()).toEqual([{ date: "2026-03-02", flags: ["total_depth_mismatch"] }]);

    const reached = ["acme", "chainlink-labs", "platform"];
    const events = await eventually(
      () => reached.every((o) => receiver.at(`/${o}`).length === 1) && reached,
      "the delivery to acme, chainlink-labs and the operator",
    );
    for (const organization of events) {
      const [request] = receiver.at(`/${organization}`);
      if (request === undefined) throw new Error(`nothing reached ${organization}`);
      const event = verified(secrets[organization] ?? "", request);
      expect(event.type).toBe("quality.flagged");
      expect(event.data).toEqual({
        organizationId: "acme",
        baseCoinId: "chainlink",
        exchangeId: "binance",
        quote: "tether",
        instrumentType: "spot",
        date: "2026-03-02",
        flags: ["total_depth_mismatch"],
      });
    }
    // Another market maker's endpoint and another coin's project hear nothing of it.
    await submit(KEYS.globex, [v2Record({ date: "2026-03-02", baseCoinId: "uniswap" })]);
    await pass();
    expect(receiver.at("/globex")).toEqual([]);
    expect(receiver.at("/uniswap-labs")).toEqual([]);
  });

  it("is not repeated by a correction with the same flags, and is again once they were lost", async () => {
    await submit(KEYS.acme, [mismatched("2026-03-02")]);
    expect(await pass()).toBe(0);
    await submit(KEYS.acme, [plausible("2026-03-02")]);
    expect(await pass()).toBe(0);
    await submit(KEYS.acme, [mismatched("2026-03-02")]);
    expect(await pass()).toBe(1);
    expect((await flagged()).map((e) => e.date)).toEqual(["2026-03-02", "2026-03-02"]);
  });

  it("judges the versions one pass reads in order, each against the flags before it", async () => {
    for (const record of [mismatched, plausible, plausible, mismatched, mismatched]) {
      await submit(KEYS.acme, [record("2026-02-20")]);
    }
    // Flagged, lost, still lost, regained, kept: announced twice.
    expect(await pass()).toBe(2);
    await submit(KEYS.acme, [mismatched("2026-02-20")]);
    expect(await pass()).toBe(0);
    await submit(KEYS.acme, [plausible("2026-02-20")]);
    await submit(KEYS.acme, [mismatched("2026-02-20")]);
    expect(await pass()).toBe(1);
  });

  it("reads into the process only the versions that change their report's flags", async () => {
    await submit(KEYS.acme, [mismatched("2026-02-21"), plausible("2026-02-22")]);
    await submit(KEYS.acme, [mismatched("2026-02-21"), plausible("2026-02-22")]);
    await submit(KEYS.acme, [plausible("2026-02-21")]);
    const read = await versionsAPassWouldRead();
    expect(read.freshCount).toBe(5);
    expect(read.flagChanges.map((v) => [v.date, v.qualityFlags !== 0])).toEqual([
      ["2026-02-21", true],
      ["2026-02-21", false],
    ]);
    // Days before notifications started that no obligation period holds: nothing to judge.
    expect(read.earlyDays).toEqual([]);
    // Every version's day is judged (report.late, kpi.missed) all the same.
    expect(read.ranges).toEqual([
      {
        organizationId: "acme",
        baseCoinId: "chainlink",
        dateGte: "2026-02-21",
        dateLte: "2026-02-22",
      },
    ]);
    expect(await pass()).toBe(1);
  });

  it("judges each report against its own flags, whoever reports the same market and day", async () => {
    // In one pass, another market maker's report of the same market and day comes between two
    // of acme's versions, with the flags acme's report had then: it is still news for globex.
    await submit(KEYS.acme, [mismatched("2026-02-23")]);
    await submit(KEYS.globex, [mismatched("2026-02-23")]);
    await submit(KEYS.acme, [plausible("2026-02-23")]);
    // acme's flag and globex's flag raised; acme's loss raises nothing.
    expect(await pass()).toBe(2);
    await submit(KEYS.acme, [mismatched("2026-02-23")]);
    expect(await pass()).toBe(1);
  });

  it("is raised when a later snapshot flips exceeds_public_depth on, once", async () => {
    await loadSnapshots([snapshot("2026-03-01", "2026-03-01T10:00:00Z", 9000)]);
    expect(await pass()).toBe(0); // 6000 is within the public 9000
    await loadSnapshots([snapshot("2026-03-01", "2026-03-01T20:00:00Z", 5000)]);
    expect(await pass()).toBe(1);
    expect((await flagged()).at(-1)).toEqual({
      date: "2026-03-01",
      flags: ["exceeds_public_depth"],
    });
    // Recomputed again with the flag unchanged: nothing; a correction keeping it: nothing.
    await loadSnapshots([snapshot("2026-03-01", "2026-03-01T22:00:00Z", 4000)]);
    await submit(KEYS.acme, [plausible("2026-03-01")]);
    expect(await pass()).toBe(0);
    // A correction adding a flag to it is news, with both flags.
    await submit(KEYS.acme, [v2Record({ date: "2026-03-01", bidAskDepth200: 1 })]);
    expect(await pass()).toBe(1);
    expect((await flagged()).at(-1)).toEqual({
      date: "2026-03-01",
      flags: ["total_depth_mismatch", "exceeds_public_depth"],
    });
  });

  it("reaches a project only for dates inside the market maker's engagement for its coin (its read scope)", async () => {
    // acme's chainlink engagement starts 2024-01-01: chainlink-labs does not read this report.
    await submit(KEYS.acme, [mismatched("2023-12-15")]);
    expect(await pass()).toBe(1);
    const queued = await sql<{ organization_id: string }>`
      select w.organization_id from webhook_deliveries d
      join webhooks w on w.id = d.webhook_id join webhook_events e on e.id = d.event_id
      where e.type = 'quality.flagged' and e.data->>'date' = '2023-12-15'
      order by w.organization_id`.execute(t.database.db);
    expect(queued.rows.map((r) => r.organization_id)).toEqual(["acme", "platform"]);
    const read = await t.request({
      url: "/api/v1/reports?organizationId=acme&dateLte=2023-12-31",
      key: READER_KEYS.chainlinkLabs,
    });
    expect(read.json().totalCount).toBe(0);
  });

  it("leaves no noted recomputation behind", async () => {
    const notes = await sql<{ n: number }>`
      select count(*)::int as n from webhook_quality_changes`.execute(t.database.db);
    expect(notes.rows[0]?.n).toBe(0);
  });
});
