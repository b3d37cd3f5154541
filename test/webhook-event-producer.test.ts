import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebhookEventProducer } from "../src/jobs/webhook-event-producer.js";
import { createObligationAdmin } from "../src/services/obligations.js";
import { openDatabase } from "../src/store/database.js";
import { createStores } from "../src/store/stores.js";
import { accountabilityFixture } from "./helpers/accountability.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { onPostgres } from "./helpers/database.js";
import { KEYS, v2Record } from "./helpers/fixture.js";
import { testProducer } from "./helpers/webhook-jobs.js";

/**
 * report.missing, report.late and kpi.missed, derived from stored data by the producer job
 * (CONTRACT section 7), driven pass by pass with the clock of the test. acme owes chainlink on
 * binance/tether and kraken/USD from 2026-03-01 (deadline 12:00 UTC the next day); notifications first
 * run on 2026-03-03 at 10:00, so 2026-03-01's deadline passed before they did.
 */
let t: TestApp;
let clock = new Date("2026-03-03T08:00:00Z");
let producer: WebhookEventProducer;
const hooks: Record<string, string> = {};

const TETHER = { exchangeId: "binance", quote: "tether", instrumentType: "spot" as const };
const USD = { exchangeId: "kraken", quote: "USD", instrumentType: "spot" as const };
const KRAKEN_USD = { exchangeId: "kraken", quoteCoinId: null, quoteCoinSymbol: "USD" };
const OBLIGATION = {
  since: "2026-03-01",
  markets: [TETHER, USD],
  kpis: { minBidDepth200: 5000, maxBidAskSpread: 0.5 },
};

const newProducer = (stores = t.database.stores) => testProducer(stores, () => clock);

async function subscribe(organizationId: string) {
  const id = randomUUID();
  await t.database.db
    .insertInto("webhooks")
    .values({
      id,
      organization_id: organizationId,
      url: `https://${organizationId}.example/hook`,
      events: ["*"],
      description: null,
      secret: "whsec_x",
    })
    .execute();
  hooks[id] = organizationId;
}

async function submit(at: string, records: Record<string, unknown>[]) {
  clock = new Date(at);
  const response = await t.request({
    method: "POST",
    url: "/api/v2/report",
    key: KEYS.acme,
    payload: { data: records },
  });
  expect(response.statusCode, response.body).toBe(201);
}

const run = (at: string, p = producer) => p.runOnce(new Date(at));

type Sent = { type: string; quote: string; date: string; data: Record<string, unknown> };
/**
 * Every event recorded so far, oldest first, with the market's quote and day; quality.flagged
 * left out (test/webhook-quality-flagged.test.ts), which some of these reports raise too.
 */
async function events(type?: string): Promise<Sent[]> {
  const rows = await t.database.db
    .selectFrom("webhook_events")
    .select(["type", "data", "dedup_key"])
    .orderBy("created_at")
    .orderBy("dedup_key")
    .execute();
  return rows
    .map((r) => {
      const data = r.data as Record<string, unknown>;
      return { type: r.type, quote: String(data.quote), date: String(data.date), data };
    })
    .filter((e) => (type === undefined ? e.type !== "quality.flagged" : e.type === type));
}

const brief = (list: Sent[]) => list.map((e) => `${e.type} ${e.quote} ${e.date}`);

beforeAll(async () => {
  t = await startTestApp({ fixture: accountabilityFixture(), now: () => clock });
  await createObligationAdmin(t.database.stores).set("acme", "chainlink", OBLIGATION);
  for (const org of ["acme", "globex", "chainlink-labs", "uniswap-labs", "platform"]) {
    await subscribe(org);
  }
  producer = newProducer();
  // Late for 2026-03-01 (its deadline: 03-02 12:00), before notifications first ran.
  await submit("2026-03-03T08:30:00Z", [v2Record({ date: "2026-03-01" })]);
  // On time for 2026-03-02 (kraken's never comes).
  await submit("2026-03-03T09:00:00Z", [v2Record({ date: "2026-03-02" })]);
});
afterAll(async () => t?.close());

describe("webhook events derived from stored data", () => {
  it("announces nothing whose deadline passed before notifications first ran", async () => {
    expect(await run("2026-03-03T10:00:00Z")).toBe(0);
    expect(await events()).toEqual([]);
  });

  it("announces a deadline passing while it runs once, a minute after it", async () => {
    expect(await run("2026-03-03T12:00:30Z")).toBe(0);
    expect(await run("2026-03-03T12:01:01Z")).toBe(1);
    expect(await run("2026-03-03T12:05:00Z")).toBe(0);
    const [missing] = await events();
    expect(missing?.data).toEqual({
      organizationId: "acme",
      baseCoinId: "chainlink",
      exchangeId: "kraken",
      quote: "USD",
      instrumentType: "spot",
      date: "2026-03-02",
      deadline: "2026-03-03T12:00:00.000Z",
    });
  });

  it("sends a market maker's event to it, the project owning the coin and operators, no one else", async () => {
    const rows = await t.database.db
      .selectFrom("webhook_deliveries")
      .select("webhook_id")
      .execute();
    expect(rows.map((r) => hooks[r.webhook_id]).sort()).toEqual([
      "acme",
      "chainlink-labs",
      "platform",
    ]);
  });

  it("after a restart, catches up on the deadlines passed meanwhile, and only those", async () => {
    // While no process runs: 03-03 on time for tether, late for USD; 03-04 on time for tether
    // but below a KPI; 03-05 nothing.
    await submit("2026-03-04T09:00:00Z", [v2Record({ date: "2026-03-03" })]);
    await submit("2026-03-05T09:00:00Z", [v2Record({ date: "2026-03-04", bidDepth200: 4000 })]);
    await submit("2026-03-05T10:00:00Z", [v2Record({ date: "2026-03-03", ...KRAKEN_USD })]);
    producer = newProducer();
    await run("2026-03-06T13:00:00Z");
    expect(brief((await events()).slice(1)).sort()).toEqual([
      "kpi.missed tether 2026-03-04",
      "report.late USD 2026-03-03",
      "report.missing USD 2026-03-03",
      "report.missing USD 2026-03-04",
      "report.missing USD 2026-03-05",
      "report.missing tether 2026-03-05",
    ]);
  });

  it("says when a late report was due and received", async () => {
    const [late] = await events("report.late");
    expect(late?.data).toMatchObject({
      quote: "USD",
      date: "2026-03-03",
      deadline: "2026-03-04T12:00:00.000Z",
      receivedAt: "2026-03-05T10:00:00.000Z",
    });
    const [missed] = await events("kpi.missed");
    expect(missed?.data).toMatchObject({ failedKpis: ["minBidDepth200"], late: false });
  });

  it("sends no second kpi.missed for a correction failing the same KPIs, a new one when they change", async () => {
    await submit("2026-03-06T14:00:00Z", [
      v2Record({ date: "2026-03-04", bidDepth200: 4500, askDepth200: 9000 }),
    ]);
    await run("2026-03-06T14:00:10Z");
    expect(await events("kpi.missed")).toHaveLength(1);
    await submit("2026-03-06T15:00:00Z", [
      v2Record({ date: "2026-03-04", bidDepth200: 4500, bidAskSpread: 0.9 }),
    ]);
    await run("2026-03-06T15:00:10Z");
    const missed = await events("kpi.missed");
    expect(missed.map((e) => e.data.failedKpis)).toEqual([
      ["minBidDepth200"],
      ["minBidDepth200", "maxBidAskSpread"],
    ]);
  });

  it("announces the same failed KPIs again after the day was met in between", async () => {
    await submit("2026-03-06T16:00:00Z", [v2Record({ date: "2026-03-04" })]);
    await run("2026-03-06T16:00:10Z");
    expect(await events("kpi.missed")).toHaveLength(2);
    await submit("2026-03-06T17:00:00Z", [
      v2Record({ date: "2026-03-04", bidDepth200: 4500, bidAskSpread: 0.9 }),
    ]);
    await run("2026-03-06T17:00:10Z");
    expect(brief(await events("kpi.missed"))).toEqual([
      "kpi.missed tether 2026-03-04",
      "kpi.missed tether 2026-03-04",
      "kpi.missed tether 2026-03-04",
    ]);
  });

  it("sends kpi.missed when an obligation change makes a stored report miss its KPIs", async () => {
    clock = new Date("2026-03-06T18:00:00Z");
    await createObligationAdmin(t.database.stores).set("acme", "chainlink", {
      ...OBLIGATION,
      kpis: { ...OBLIGATION.kpis, minBidDepth200: 6500 },
    });
    await run("2026-03-06T18:00:10Z");
    const missed = (await events("kpi.missed")).slice(3);
    // Not 03-01, whose deadline passed before notifications started and whose report was
    // stored before they did: a period changed now does not judge such a day (see the last
    // test for one whose report came since).
    expect(brief(missed)).toEqual([
      "kpi.missed tether 2026-03-02",
      "kpi.missed tether 2026-03-03",
      "kpi.missed USD 2026-03-03",
    ]);
    expect(missed[0]?.data).toMatchObject({ failedKpis: ["minBidDepth200"], late: false });
    expect(missed[2]?.data).toMatchObject({ failedKpis: ["minBidDepth200"], late: true });
    // Judged again with nothing changed: nothing more.
    await createObligationAdmin(t.database.stores).set("acme", "chainlink", {
      ...OBLIGATION,
      kpis: { ...OBLIGATION.kpis, minBidDepth200: 6600 },
    });
    await run("2026-03-06T18:30:00Z");
    expect(await events("kpi.missed")).toHaveLength(6);
  });

  it("two producers running at once record each event once", async () => {
    // On PostgreSQL a connection pool of its own, as another process has; PGlite has one.
    const second = onPostgres ? await openDatabase(t.database.config) : undefined;
    try {
      const other = newProducer(second ? createStores(second.db) : t.database.stores);
      const before = (await events()).length;
      const counts = await Promise.all([
        run("2026-03-08T13:00:00Z"),
        run("2026-03-08T13:00:00Z", other),
        run("2026-03-08T13:00:00Z"),
        run("2026-03-08T13:00:00Z", other),
      ]);
      const after = await events();
      // 03-06 and 03-07: both markets missing.
      expect(brief(after.slice(before)).sort()).toEqual([
        "report.missing USD 2026-03-06",
        "report.missing USD 2026-03-07",
        "report.missing tether 2026-03-06",
        "report.missing tether 2026-03-07",
      ]);
      expect(counts.reduce((a, b) => a + b, 0)).toBe(4);
    } finally {
      await second?.close();
    }
  });

  it("announces a report arriving now for a day whose deadline passed before notifications started: late, and its KPIs; never missing", async () => {
    const before = (await events()).length;
    await submit("2026-03-08T13:30:00Z", [
      v2Record({ date: "2026-03-01", ...KRAKEN_USD, bidDepth200: 4000 }),
    ]);
    await run("2026-03-08T13:30:10Z");
    // Only that market's day: tether's 03-01 report (late, before notifications started, and
    // below today's KPIs) is not judged for it.
    const sent = (await events()).slice(before);
    expect(brief(sent).sort()).toEqual(["kpi.missed USD 2026-03-01", "report.late USD 2026-03-01"]);
    expect(sent.find((e) => e.type === "report.late")?.data).toMatchObject({
      deadline: "2026-03-02T12:00:00.000Z",
      receivedAt: "2026-03-08T13:30:00.000Z",
    });
    expect(sent.find((e) => e.type === "kpi.missed")?.data).toMatchObject({
      failedKpis: ["minBidDepth200"],
      late: true,
    });
  });

  it("announces a correction now of a report that arrived late before notifications started: its KPIs, not its lateness", async () => {
    const before = (await events()).length;
    await submit("2026-03-08T13:40:00Z", [v2Record({ date: "2026-03-01", bidDepth200: 4000 })]);
    await run("2026-03-08T13:40:10Z");
    const sent = (await events()).slice(before);
    expect(brief(sent)).toEqual(["kpi.missed tether 2026-03-01"]);
    expect(sent[0]?.data).toMatchObject({ failedKpis: ["minBidDepth200"], late: true });
  });

  it.runIf(onPostgres)(
    "judges a version whose transaction committed after a later one was seen",
    async () => {
      const slow = await correctionInFlight();
      try {
        await submit("2026-03-08T14:00:00Z", [v2Record({ date: "2026-03-07" })]);
        await run("2026-03-08T14:00:10Z");
        const before = (await events("kpi.missed")).length;
        await slow.end("commit");
        await run("2026-03-08T14:01:00Z");
        const missed = (await events("kpi.missed")).slice(before);
        expect(brief(missed)).toEqual(["kpi.missed tether 2026-03-03"]);
        expect(missed[0]?.data.failedKpis).toEqual(["minBidDepth200", "maxBidAskSpread"]);
      } finally {
        await slow.close();
      }
    },
  );

  it.runIf(onPostgres)("forgets the id of a version whose transaction rolled back", async () => {
    const slow = await correctionInFlight();
    try {
      await submit("2026-03-08T15:00:00Z", [v2Record({ date: "2026-03-07", ...KRAKEN_USD })]);
      await run("2026-03-08T15:00:10Z");
      expect(await holes()).toBe(1);
      await slow.end("rollback");
      // Dropped once every transaction that was running when the hole was noted has ended:
      // the server's oldest running transaction decides, and other test files' transactions on
      // the same server may hold it back for a moment.
      let left = 1;
      for (let pass = 0; pass < 100 && left > 0; pass++) {
        await run(new Date(Date.parse("2026-03-08T15:01:00Z") + pass * 1_000).toISOString());
        left = await holes();
        if (left > 0) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(left).toBe(0);
    } finally {
      await slow.close();
    }
  });
});

describe("an obligation change of days whose deadline passed before notifications started", () => {
  it("judges those whose report arrived or was corrected since: subscribers were told of them", async () => {
    // Both markets' 03-01 reports came (USD) or were corrected (tether) on 03-08, each
    // announced missing minBidDepth200; the spread they report (0.25) now misses too.
    const before = (await events("kpi.missed")).length;
    clock = new Date("2026-03-08T16:00:00Z");
    await createObligationAdmin(t.database.stores).set("acme", "chainlink", {
      ...OBLIGATION,
      kpis: { minBidDepth200: 6600, maxBidAskSpread: 0.2 },
    });
    await run("2026-03-08T16:00:10Z");
    const early = (await events("kpi.missed")).slice(before).filter((e) => e.date < "2026-03-02");
    expect(brief(early).sort()).toEqual([
      "kpi.missed USD 2026-03-01",
      "kpi.missed tether 2026-03-01",
    ]);
    for (const e of early) {
      expect(e.data).toMatchObject({
        failedKpis: ["minBidDepth200", "maxBidAskSpread"],
        late: true,
      });
    }
  });
});

async function holes(): Promise<number> {
  const r = await sql<{ n: number }>`
    select count(*)::int as n from webhook_version_holes`.execute(t.database.db);
  return r.rows[0]?.n ?? 0;
}

/**
 * A correction of 03-03's tether report (below two KPIs), written on a connection of its own
 * in a transaction held open until `end`: its version id is drawn before later ones commit.
 */
async function correctionInFlight() {
  const second = await openDatabase(t.database.config);
  let finish: (how: "commit" | "rollback") => void = () => {};
  const decided = new Promise<"commit" | "rollback">((resolve) => {
    finish = resolve;
  });
  let written = () => {};
  const inFlight = new Promise<void>((resolve) => {
    written = resolve;
  });
  const transaction = second.db
    .transaction()
    .execute(async (trx) => {
      await sql`update reports set bid_depth_200 = 100, bid_ask_spread = 0.9
        where organization_id = 'acme' and date = '2026-03-03' and quote_key = 'tether'`.execute(
        trx,
      );
      await sql`insert into report_versions (report_id, submission_id, schema_version,
          bid_depth_50, bid_depth_100, bid_depth_200, ask_depth_50, ask_depth_100,
          ask_depth_200, bid_ask_depth_50, bid_ask_depth_100, bid_ask_depth_200,
          bid_ask_spread, order_fill_volume_maker, order_fill_volume_taker)
        select id, gen_random_uuid(), schema_version, bid_depth_50, bid_depth_100,
          bid_depth_200, ask_depth_50, ask_depth_100, ask_depth_200, bid_ask_depth_50,
          bid_ask_depth_100, bid_ask_depth_200, bid_ask_spread, order_fill_volume_maker,
          order_fill_volume_taker
        from reports where organization_id = 'acme' and date = '2026-03-03'
          and quote_key = 'tether'`.execute(trx);
      written();
      if ((await decided) === "rollback") throw new RolledBack();
    })
    .catch((error: unknown) => {
      if (!(error instanceof RolledBack)) throw error;
    });
  await inFlight;
  return {
    async end(how: "commit" | "rollback") {
      finish(how);
      await transaction;
    },
    async close() {
      finish("rollback");
      await transaction;
      await second.close();
    },
  };
}

class RolledBack extends Error {}
