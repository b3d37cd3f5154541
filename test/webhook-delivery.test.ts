import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebhookEvent } from "../src/domain/webhook-event.js";
import { startWebhookDeliveries, type WebhookJob } from "../src/jobs/webhook-deliveries.js";
import { accountabilityFixture, READER_KEYS } from "./helpers/accountability.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS } from "./helpers/fixture.js";
import { eventually, type Receiver, startReceiver, verified } from "./helpers/webhook-receiver.js";

/**
 * Deliveries end to end (CONTRACT section 7): a receiver on loopback (allowed by
 * WEBHOOK_ALLOW_INSECURE) gets signed events that the published `standardwebhooks` package
 * verifies; retries keep the webhook-id; each organization hears only its scope.
 */
let t: TestApp;
let receiver: Receiver;
let job: WebhookJob;
const SCHEDULE = [0, 0, 0];

beforeAll(async () => {
  t = await startTestApp({
    fixture: accountabilityFixture(),
    env: { WEBHOOK_ALLOW_INSECURE: "true" },
  });
  receiver = await startReceiver();
  job = startWebhookDeliveries(t.database.stores, {
    allowInsecure: true,
    timeoutMs: 2_000,
    retrySchedule: SCHEDULE,
    concurrency: 4,
    pollMs: 50,
  });
});
afterAll(async () => {
  await job?.stop();
  await receiver?.close();
  await t?.close();
});

async function subscribe(key: string, path: string, events: string[] = ["*"]) {
  const response = await t.request({
    method: "POST",
    url: "/api/v1/webhooks",
    key,
    payload: { url: receiver.url(path), events },
  });
  expect(response.statusCode).toBe(201);
  return response.json() as { id: string; secret: string };
}

const log = async (key: string, id: string) =>
  (await t.request({ url: `/api/v1/webhooks/${id}/deliveries`, key })).json().items as {
    id: string;
    status: string;
    attempts: number;
    lastStatusCode: number | null;
    lastError: string | null;
  }[];

function kpiMissed(organizationId: string, baseCoinId: string, date: string): WebhookEvent {
  return {
    type: "kpi.missed",
    data: {
      organizationId,
      baseCoinId,
      exchangeId: "binance",
      quote: "tether",
      instrumentType: "spot",
      date,
      failedKpis: ["minBidDepth200"],
      late: false,
    },
    organizationId,
    baseCoinId,
    occurredAt: new Date(`${date}T13:00:00Z`),
    dedupKey: `kpi:${organizationId}:${baseCoinId}:${date}`,
  };
}

describe("webhook deliveries", () => {
  it("delivers webhook.test, signed as Standard Webhooks says, and logs the success", async () => {
    const hook = await subscribe(KEYS.acme, "/test");
    const sent = await t.request({
      method: "POST",
      url: `/api/v1/webhooks/${hook.id}/test`,
      key: KEYS.acme,
    });
    expect(sent.statusCode).toBe(202);
    const [request] = await eventually(
      () => receiver.at("/test").length > 0 && receiver.at("/test"),
      "webhook.test",
    );
    if (request === undefined) throw new Error("unreachable");
    expect(request.headers["content-type"]).toBe("application/json");
    const event = verified(hook.secret, request);
    expect(event).toEqual({
      type: "webhook.test",
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: { webhookId: hook.id },
    });
    expect(Object.keys(JSON.parse(request.body))).toEqual(["type", "timestamp", "data"]);
    const [entry] = await eventually(async () => {
      const items = await log(KEYS.acme, hook.id);
      return items[0]?.status === "succeeded" && items;
    }, "the log to show the success");
    expect(entry).toMatchObject({
      id: request.headers["webhook-id"],
      attempts: 1,
      lastStatusCode: 200,
      lastError: null,
    });
  });

  it("retries a receiver that fails twice with the same webhook-id and body; the log shows 3 attempts", async () => {
    const hook = await subscribe(KEYS.globex, "/flaky");
    receiver.answer("/flaky", 500, 503);
    await t.request({ method: "POST", url: `/api/v1/webhooks/${hook.id}/test`, key: KEYS.globex });
    const requests = await eventually(
      () => receiver.at("/flaky").length >= 3 && receiver.at("/flaky"),
      "three attempts",
    );
    const ids = new Set(requests.map((r) => r.headers["webhook-id"]));
    expect(ids.size).toBe(1);
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    for (const request of requests)
      expect(verified(hook.secret, request).type).toBe("webhook.test");
    const [entry] = await eventually(async () => {
      const items = await log(KEYS.globex, hook.id);
      return items[0]?.status === "succeeded" && items;
    }, "the log to show the success");
    expect(entry).toMatchObject({ id: [...ids][0], attempts: 3, lastStatusCode: 200 });
  });

  it("fails a delivery after the schedule's attempts, keeps an excerpt of the answer, and retries it on request", async () => {
    const hook = await subscribe(KEYS.globex, "/down");
    receiver.answer("/down", 500, 500, 500, 500);
    await t.request({ method: "POST", url: `/api/v1/webhooks/${hook.id}/test`, key: KEYS.globex });
    const [entry] = await eventually(async () => {
      const items = await log(KEYS.globex, hook.id);
      return items[0]?.status === "failed" && items;
    }, "the delivery to fail");
    expect(entry?.attempts).toBe(SCHEDULE.length + 1);
    expect(entry?.lastStatusCode).toBe(500);
    expect(entry?.lastError).toMatch(/^HTTP 500: nope x+$/);
    expect(entry?.lastError?.length).toBeLessThanOrEqual(300);

    const retry = await t.request({
      method: "POST",
      url: `/api/v1/webhooks/${hook.id}/deliveries/${entry?.id}/retry`,
      key: KEYS.globex,
    });
    expect(retry.statusCode).toBe(202);
    await eventually(
      async () => (await log(KEYS.globex, hook.id))[0]?.status === "succeeded",
      "the retry",
    );
    expect(receiver.at("/down")).toHaveLength(SCHEDULE.length + 2);
  });

  it("does not follow redirects: a 302 is a failed attempt", async () => {
    const hook = await subscribe(KEYS.globex, "/moved");
    receiver.answer("/moved", 302, 302, 302, 302);
    await t.request({ method: "POST", url: `/api/v1/webhooks/${hook.id}/test`, key: KEYS.globex });
    const [entry] = await eventually(async () => {
      const items = await log(KEYS.globex, hook.id);
      return items[0]?.status === "failed" && items;
    }, "the delivery to fail");
    expect(entry?.lastStatusCode).toBe(302);
  });

  it("sends each organization the events of its read scope only", async () => {
    const hooks = {
      acme: await subscribe(KEYS.acme, "/scope/acme", ["kpi.missed"]),
      globex: await subscribe(KEYS.globex, "/scope/globex", ["kpi.missed"]),
      chainlinkLabs: await subscribe(READER_KEYS.chainlinkLabs, "/scope/chainlink-labs"),
      uniswapLabs: await subscribe(READER_KEYS.uniswapLabs, "/scope/uniswap-labs"),
      operator: await subscribe(READER_KEYS.operator, "/scope/operator"),
    };
    const now = new Date();
    await t.database.stores.webhookEvents.publish(
      [
        kpiMissed("acme", "chainlink", "2026-03-01"),
        kpiMissed("globex", "chainlink", "2026-03-01"),
        kpiMissed("acme", "uniswap", "2026-03-01"),
      ],
      now,
    );
    const heard = (name: keyof typeof hooks) =>
      receiver
        .at(`/scope/${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`)
        .map((r) => verified(hooks[name].secret, r).data)
        .map((d) => `${d.organizationId}/${d.baseCoinId}`)
        .sort();
    await eventually(() => heard("operator").length === 3, "the operator's three events");
    // Every delivery of the three events is made: none is left for the endpoints below.
    await eventually(async () => {
      const pending = await t.database.db
        .selectFrom("webhook_deliveries")
        .where("status", "=", "pending")
        .select("id")
        .execute();
      return pending.length === 0;
    }, "no pending delivery");
    expect(heard("acme")).toEqual(["acme/chainlink", "acme/uniswap"]);
    expect(heard("globex")).toEqual(["globex/chainlink"]);
    expect(heard("chainlinkLabs")).toEqual(["acme/chainlink", "globex/chainlink"]);
    expect(heard("uniswapLabs")).toEqual(["acme/uniswap"]);
    expect(heard("operator")).toEqual(["acme/chainlink", "acme/uniswap", "globex/chainlink"]);
  });
});
