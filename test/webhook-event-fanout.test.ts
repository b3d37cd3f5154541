import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebhookEvent } from "../src/domain/webhook-event.js";
import { loadFixture } from "../src/services/fixtures.js";
import { accountabilityFixture } from "./helpers/accountability.js";
import { freshDatabase, type TestDatabase } from "./helpers/database.js";

/** Who hears of an event (CONTRACT section 7): the fan-out of `webhookEvents.publish`. */
let db: TestDatabase;
const NOW = new Date("2026-03-02T12:00:00Z");

async function subscribe(organizationId: string, events: string[], disabled = false) {
  const id = randomUUID();
  await db.db
    .insertInto("webhooks")
    .values({
      id,
      organization_id: organizationId,
      url: `https://${organizationId}.example/hook`,
      events,
      description: null,
      secret: "whsec_x",
      disabled,
    })
    .execute();
  return id;
}

const hooks: Record<string, string> = {};
beforeAll(async () => {
  db = await freshDatabase();
  await loadFixture(db.stores, accountabilityFixture(), NOW);
  hooks.acme = await subscribe("acme", ["*"]);
  hooks.acmeLateOnly = await subscribe("acme", ["report.late"]);
  hooks.globex = await subscribe("globex", ["*"]);
  hooks.chainlinkLabs = await subscribe("chainlink-labs", ["kpi.missed", "report.missing"]);
  hooks.uniswapLabs = await subscribe("uniswap-labs", ["*"]);
  hooks.platform = await subscribe("platform", ["*"]);
  hooks.platformDisabled = await subscribe("platform", ["*"], true);
});
afterAll(async () => db?.close());

const marketDay = {
  organizationId: "acme",
  baseCoinId: "chainlink",
  exchangeId: "binance",
  quote: "tether",
  instrumentType: "spot" as const,
  date: "2026-03-01",
};

async function recipients(eventId: string): Promise<string[]> {
  const rows = await db.db
    .selectFrom("webhook_deliveries as d")
    .innerJoin("webhook_events as e", "e.id", "d.event_id")
    .where("e.dedup_key", "=", eventId)
    .select("d.webhook_id")
    .execute();
  const names = Object.fromEntries(Object.entries(hooks).map(([k, v]) => [v, k]));
  return rows.map((r) => names[r.webhook_id] ?? r.webhook_id).sort();
}

describe("webhook event fan-out", () => {
  it("sends a market event to its market maker, the projects owning the coin and operators", async () => {
    const event: WebhookEvent = {
      type: "report.missing",
      data: { ...marketDay, deadline: "2026-03-02T12:00:00.000Z" },
      organizationId: "acme",
      baseCoinId: "chainlink",
      occurredAt: NOW,
      dedupKey: "missing-1",
    };
    expect(await db.stores.webhookEvents.publish([event], NOW)).toBe(1);
    expect(await recipients("missing-1")).toEqual(["acme", "chainlinkLabs", "platform"]);
    // The same event again is recorded once: no second delivery.
    expect(await db.stores.webhookEvents.publish([event], NOW)).toBe(0);
    expect(await recipients("missing-1")).toEqual(["acme", "chainlinkLabs", "platform"]);
  });

  it("honours each endpoint's event types", async () => {
    const event: WebhookEvent = {
      type: "report.late",
      data: { ...marketDay, deadline: "x", receivedAt: "y" },
      organizationId: "acme",
      baseCoinId: "chainlink",
      occurredAt: NOW,
      dedupKey: "late-1",
    };
    await db.stores.webhookEvents.publish([event], NOW);
    expect(await recipients("late-1")).toEqual(["acme", "acmeLateOnly", "platform"]);
  });

  it("sends submission.rejected to the market maker only, webhook.test to its endpoint only", async () => {
    await db.stores.webhookEvents.publish(
      [
        {
          type: "submission.rejected",
          data: { submissionId: randomUUID(), apiVersion: 2, recordCount: 3, problemCount: 1 },
          organizationId: "acme",
          baseCoinId: null,
          occurredAt: NOW,
          dedupKey: "rejected-1",
        },
        {
          type: "webhook.test",
          data: { webhookId: hooks.acmeLateOnly as string },
          organizationId: "acme",
          baseCoinId: null,
          occurredAt: NOW,
          dedupKey: "test-1",
          webhookId: hooks.acmeLateOnly as string,
        },
      ],
      NOW,
    );
    expect(await recipients("rejected-1")).toEqual(["acme"]);
    expect(await recipients("test-1")).toEqual(["acmeLateOnly"]);
  });

  it("keeps the payload's keys in the order written", async () => {
    const data = { ...marketDay, failedKpis: ["minBidDepth200"], late: false };
    await db.stores.webhookEvents.publish(
      [
        {
          type: "kpi.missed",
          data,
          organizationId: "acme",
          baseCoinId: "chainlink",
          occurredAt: NOW,
          dedupKey: "kpi-1",
        },
      ],
      NOW,
    );
    const row = await db.db
      .selectFrom("webhook_events")
      .where("dedup_key", "=", "kpi-1")
      .select("data")
      .executeTakeFirstOrThrow();
    expect(Object.keys(row.data as object)).toEqual(Object.keys(data));
  });
});

describe("webhook events with no endpoint enabled anywhere", () => {
  it("are not recorded (nobody could read them); once an endpoint is enabled they are", async () => {
    const quiet = await freshDatabase();
    try {
      await loadFixture(quiet.stores, accountabilityFixture(), NOW);
      const event = (dedupKey: string): WebhookEvent => ({
        type: "report.missing",
        data: { ...marketDay, deadline: "2026-03-02T12:00:00.000Z" },
        organizationId: "acme",
        baseCoinId: "chainlink",
        occurredAt: NOW,
        dedupKey,
      });
      const stored = async () =>
        (await quiet.db.selectFrom("webhook_events").select("dedup_key").execute()).map(
          (r) => r.dedup_key,
        );
      expect(await quiet.stores.webhookEvents.publish([event("quiet-1")], NOW)).toBe(0);
      const id = randomUUID();
      const endpoint = {
        id,
        organization_id: "globex",
        url: "https://globex.example/hook",
        events: ["*"],
        description: null,
        secret: "whsec_x",
        disabled: true,
      };
      await quiet.db.insertInto("webhooks").values(endpoint).execute();
      expect(await quiet.stores.webhookEvents.publish([event("quiet-2")], NOW)).toBe(0);
      expect(await stored()).toEqual([]);
      // Enabled, even if it does not hear of this event: recorded as before.
      await quiet.db
        .updateTable("webhooks")
        .set({ disabled: false })
        .where("id", "=", id)
        .execute();
      expect(await quiet.stores.webhookEvents.publish([event("quiet-3")], NOW)).toBe(1);
      expect(await stored()).toEqual(["quiet-3"]);
    } finally {
      await quiet.close();
    }
  });
});
