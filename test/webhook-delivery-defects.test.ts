import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebhookEvent } from "../src/domain/webhook-event.js";
import { startWebhookDeliveries } from "../src/jobs/webhook-deliveries.js";
import { accountabilityFixture } from "./helpers/accountability.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { onPostgres } from "./helpers/database.js";
import { KEYS } from "./helpers/fixture.js";
import { eventually, type Receiver, startReceiver } from "./helpers/webhook-receiver.js";

/**
 * Delivery rules of the README (CONTRACT section 7) that once failed: a receiver's answer
 * holding a NUL byte stopped every delivery of every organization; a failed or succeeded
 * delivery retried by hand went back to its schedule, and a pending one lost a scheduled
 * attempt and its due time; an event recorded while its endpoint was being disabled
 * left a delivery pending on it, sent once the endpoint was enabled again.
 */
let t: TestApp;
let receiver: Receiver;
let nulServer: Server;
let nulUrl = "";

beforeAll(async () => {
  t = await startTestApp({
    fixture: accountabilityFixture(),
    env: { WEBHOOK_ALLOW_INSECURE: "true" },
  });
  receiver = await startReceiver();
  nulServer = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      response.writeHead(500, { "content-type": "text/plain" });
      response.end("bad\u0000answer\u0007\u007f\u0085 \ud83d\ude00");
    });
  });
  await new Promise<void>((done) => nulServer.listen(0, "127.0.0.1", done));
  nulUrl = `http://127.0.0.1:${(nulServer.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  await receiver?.close();
  await new Promise<void>((done) => nulServer.close(() => done()));
  await t?.close();
});

/** The delivery job while `work` runs (stopped between tests: they arrange the queue first). */
async function withJob<T>(work: (errors: unknown[]) => Promise<T>): Promise<T> {
  const errors: unknown[] = [];
  const job = startWebhookDeliveries(t.database.stores, {
    allowInsecure: true,
    timeoutMs: 2_000,
    // A long wait before an automatic retry: only the attempts a test asks for are made.
    retrySchedule: [3600, 3600, 3600],
    concurrency: 4,
    pollMs: 50,
    onError: (error) => errors.push(error),
  });
  try {
    return await work(errors);
  } finally {
    await job.stop();
  }
}

async function subscribe(key: string, url: string) {
  const response = await t.request({
    method: "POST",
    url: "/api/v1/webhooks",
    key,
    payload: { url, events: ["*"] },
  });
  expect(response.statusCode).toBe(201);
  return (response.json() as { id: string }).id;
}

const patch = (key: string, id: string, disabled: boolean) =>
  t.request({ method: "PATCH", url: `/api/v1/webhooks/${id}`, key, payload: { disabled } });

const retry = (id: string, deliveryId: string | undefined) =>
  t.request({
    method: "POST",
    url: `/api/v1/webhooks/${id}/deliveries/${deliveryId}/retry`,
    key: KEYS.globex,
  });

const sendTest = (key: string, id: string) =>
  t.request({ method: "POST", url: `/api/v1/webhooks/${id}/test`, key });

const log = async (key: string, id: string) =>
  (await t.request({ url: `/api/v1/webhooks/${id}/deliveries`, key })).json().items as {
    id: string;
    status: string;
    attempts: number;
    lastStatusCode: number | null;
    lastError: string | null;
    nextAttemptAt: string | null;
  }[];

const kpiMissed = (dedupKey: string): WebhookEvent => ({
  type: "kpi.missed",
  data: {
    organizationId: "acme",
    baseCoinId: "chainlink",
    exchangeId: "binance",
    quote: "tether",
    instrumentType: "spot",
    date: "2026-03-04",
    failedKpis: ["minBidDepth200"],
    late: false,
  },
  organizationId: "acme",
  baseCoinId: "chainlink",
  occurredAt: new Date(),
  dedupKey,
});

/** What an event recorded just after its endpoint was disabled leaves: a pending delivery. */
async function pendingOnDisabled(path: string) {
  const id = await subscribe(KEYS.acme, receiver.url(path));
  await t.database.stores.webhookEvents.publish([kpiMissed(`defects:${path}`)], new Date());
  await sql`update webhooks set disabled = true where id = ${id}`.execute(t.database.db);
  expect((await log(KEYS.acme, id)).map((d) => d.status)).toEqual(["pending"]);
  return id;
}

describe("an answer holding a NUL byte", () => {
  it("is logged without it, and deliveries to other organizations go on", async () => {
    const nulHook = await subscribe(KEYS.globex, nulUrl);
    const fineHook = await subscribe(KEYS.acme, receiver.url("/fine"));
    await withJob(async (errors) => {
      await sendTest(KEYS.globex, nulHook);
      await eventually(async () => (await log(KEYS.globex, nulHook))[0]?.attempts === 1, "nul");
      await sendTest(KEYS.acme, fineHook);
      await eventually(() => receiver.at("/fine").length > 0, "the other organization's test");
      expect(errors).toEqual([]);
    });
    const [attempt] = await log(KEYS.globex, nulHook);
    expect(attempt).toMatchObject({ attempts: 1, lastStatusCode: 500, status: "pending" });
    expect(attempt?.lastError).toBe("HTTP 500: bad\ufffdanswer\ufffd\ufffd\ufffd \ud83d\ude00");
  });

  it("an error text the database refuses is recorded without it, and claims go on", async () => {
    const id = await subscribe(KEYS.globex, receiver.url("/unstorable"));
    await sendTest(KEYS.globex, id);
    const at = new Date();
    const claimed = await t.database.stores.transaction(async (tx) => {
      const [delivery] = await tx.webhookDeliveries.claim(at, 10, new Date(at.getTime() + 60_000));
      expect(delivery?.webhookId).toBe(id);
      await tx.webhookDeliveries.record({
        id: delivery?.id ?? "",
        attemptsBefore: 0,
        at,
        statusCode: 500,
        error: "HTTP 500: \u0000",
        succeeded: false,
        nextAttemptAt: new Date(at.getTime() + 3_600_000),
        manual: false,
        disableIfFailingSince: new Date(0),
      });
      return tx.webhookDeliveries.claim(at, 10, new Date(at.getTime() + 60_000));
    });
    expect(claimed).toEqual([]);
    expect(await log(KEYS.globex, id)).toMatchObject([
      {
        status: "pending",
        attempts: 1,
        lastStatusCode: 500,
        lastError: "the attempt failed; its error text could not be stored",
      },
    ]);
  });
});

describe("manual retry", () => {
  it("of a failed delivery that fails again leaves it failed (one attempt, not the schedule)", async () => {
    const id = await subscribe(KEYS.globex, receiver.url("/down"));
    receiver.answer("/down", 500, 500, 500);
    await withJob(async () => {
      await sendTest(KEYS.globex, id);
      await eventually(async () => (await log(KEYS.globex, id))[0]?.attempts === 1, "attempt");
      // Disabling fails the pending delivery; enabled again, it is retried by hand.
      for (const disabled of [true, false])
        expect((await patch(KEYS.globex, id, disabled)).statusCode).toBe(200);
      const [failed] = await log(KEYS.globex, id);
      expect(failed?.status).toBe("failed");
      const retry = await t.request({
        method: "POST",
        url: `/api/v1/webhooks/${id}/deliveries/${failed?.id}/retry`,
        key: KEYS.globex,
      });
      expect(retry.statusCode).toBe(202);
      const [after] = await eventually(async () => {
        const items = await log(KEYS.globex, id);
        return items[0]?.attempts === 2 && items;
      }, "the manual attempt");
      expect(after).toMatchObject({ status: "failed", nextAttemptAt: null, lastStatusCode: 500 });
    });
    expect(receiver.at("/down")).toHaveLength(2);
  });

  it("of a succeeded delivery is one attempt: failing, it is failed with no next attempt", async () => {
    const id = await subscribe(KEYS.globex, receiver.url("/was-fine"));
    await withJob(async () => {
      await sendTest(KEYS.globex, id);
      const [done] = await eventually(async () => {
        const items = await log(KEYS.globex, id);
        return items[0]?.status === "succeeded" && items;
      }, "the first attempt");
      receiver.answer("/was-fine", 500, 500);
      expect((await retry(id, done?.id)).statusCode).toBe(202);
      const [after] = await eventually(async () => {
        const items = await log(KEYS.globex, id);
        return items[0]?.attempts === 2 && items;
      }, "the manual attempt");
      // Before: it went back to the schedule (pending, 3 attempts more) and could end failed.
      expect(after).toMatchObject({ status: "failed", nextAttemptAt: null, lastStatusCode: 500 });
    });
    expect(receiver.at("/was-fine")).toHaveLength(2);
  });

  it("of a pending delivery is one attempt more: its next attempt stays due when it was, and its schedule is whole", async () => {
    const id = await subscribe(KEYS.globex, receiver.url("/flaky"));
    receiver.answer("/flaky", ...Array(10).fill(500));
    await withJob(async () => {
      await sendTest(KEYS.globex, id);
      const [first] = await eventually(async () => {
        const items = await log(KEYS.globex, id);
        return items[0]?.attempts === 1 && items;
      }, "the first attempt");
      expect((await retry(id, first?.id)).statusCode).toBe(202);
      const [after] = await eventually(async () => {
        const items = await log(KEYS.globex, id);
        return items[0]?.attempts === 2 && items;
      }, "the manual attempt");
      expect(after?.status).toBe("pending");
      expect(after?.nextAttemptAt).toBe(first?.nextAttemptAt);
      // The schedule's 3 retries are still to come: 1 + 3 + the manual one = 5 attempts.
      for (let attempts = 3; attempts <= 5; attempts++) {
        await sql`update webhook_deliveries set next_attempt_at = now()
          where id = ${first?.id} and status = 'pending'`.execute(t.database.db);
        await eventually(
          async () => (await log(KEYS.globex, id))[0]?.attempts === attempts,
          "an attempt",
        );
      }
      expect(await log(KEYS.globex, id)).toMatchObject([{ status: "failed", attempts: 5 }]);
    });
  });
});

describe("a delivery left pending on a disabled endpoint", () => {
  it("fails instead of being sent when the job reaches it", async () => {
    const id = await pendingOnDisabled("/left");
    await withJob(async () => {
      await eventually(async () => (await log(KEYS.acme, id))[0]?.status === "failed", "failed");
    });
    expect(await log(KEYS.acme, id)).toMatchObject([
      { status: "failed", attempts: 0, lastError: "not sent: the webhook was disabled" },
    ]);
    expect(receiver.at("/left")).toEqual([]);
  });

  it("is not sent when the endpoint is enabled again", async () => {
    const id = await pendingOnDisabled("/enabled-again");
    expect((await patch(KEYS.acme, id, false)).statusCode).toBe(200);
    await withJob(async () => {
      await sendTest(KEYS.acme, id);
      await eventually(() => receiver.at("/enabled-again").length > 0, "the webhook.test");
    });
    const sent = receiver.at("/enabled-again").map((r) => JSON.parse(r.body).type);
    expect(sent).toEqual(["webhook.test"]);
    expect((await log(KEYS.acme, id)).map((d) => [d.status, d.attempts])).toEqual([
      ["succeeded", 1],
      ["failed", 0],
    ]);
  });
});

describe.runIf(onPostgres)("disabling while an event is being recorded (PostgreSQL)", () => {
  /** Runs `inside` within a transaction that stays open until `gate` resolves. */
  function heldOpen(inside: (stores: TestApp["database"]["stores"]) => Promise<unknown>) {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let began: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      began = resolve;
    });
    const done = t.database.stores.transaction(async (tx) => {
      await inside(tx);
      began();
      await gate;
    });
    return { started, release, done };
  }

  it("the disabling waits for the recording, then fails its delivery", async () => {
    const id = await subscribe(KEYS.acme, "http://127.0.0.1:9/recording");
    const recording = heldOpen((tx) => tx.webhookEvents.publish([kpiMissed("race:1")], new Date()));
    await recording.started;
    const patched = patch(KEYS.acme, id, true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    recording.release();
    await recording.done;
    expect((await patched).statusCode).toBe(200);
    expect((await log(KEYS.acme, id)).map((d) => d.status)).toEqual(["failed"]);
  });

  it("an event recorded while the endpoint is being disabled queues nothing for it", async () => {
    const id = await subscribe(KEYS.acme, "http://127.0.0.1:9/disabling");
    const disabling = heldOpen(async (tx) => {
      await tx.webhooks.update("acme", id, { disabled: true }, new Date());
      await tx.webhooks.failPending(id, "not sent: the webhook was disabled");
    });
    await disabling.started;
    const recorded = t.database.stores.transaction((tx) =>
      tx.webhookEvents.publish([kpiMissed("race:2")], new Date()),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    disabling.release();
    await Promise.all([disabling.done, recorded]);
    expect(await log(KEYS.acme, id)).toEqual([]);
  });
});

describe("a pending delivery of an event type the endpoint no longer subscribes to", () => {
  const events = (id: string, list: string[]) =>
    t.request({
      method: "PATCH",
      url: `/api/v1/webhooks/${id}`,
      key: KEYS.acme,
      payload: { events: list },
    });

  async function pendingKpiMissed(path: string) {
    const id = await subscribe(KEYS.acme, receiver.url(path));
    await t.database.stores.webhookEvents.publish([kpiMissed(`unsubscribed:${path}`)], new Date());
    expect((await log(KEYS.acme, id)).map((d) => d.status)).toEqual(["pending"]);
    return id;
  }

  it("fails at once when PATCH drops its type, and is never sent", async () => {
    const id = await pendingKpiMissed("/dropped");
    expect((await events(id, ["report.missing"])).statusCode).toBe(200);
    expect(await log(KEYS.acme, id)).toMatchObject([
      {
        status: "failed",
        attempts: 0,
        nextAttemptAt: null,
        lastError: "not sent: the webhook no longer subscribes to this event type",
      },
    ]);
    await withJob(async () => {
      await sendTest(KEYS.acme, id);
      await eventually(() => receiver.at("/dropped").length > 0, "the webhook.test");
    });
    expect(receiver.at("/dropped").map((r) => JSON.parse(r.body).type)).toEqual(["webhook.test"]);
  });

  it("stays pending, and is sent, when the new events still name its type", async () => {
    const id = await pendingKpiMissed("/kept");
    expect((await events(id, ["report.missing", "kpi.missed"])).statusCode).toBe(200);
    expect((await log(KEYS.acme, id)).map((d) => d.status)).toEqual(["pending"]);
    await withJob(async () => {
      await eventually(async () => (await log(KEYS.acme, id))[0]?.status === "succeeded", "sent");
    });
    expect(receiver.at("/kept").map((r) => JSON.parse(r.body).type)).toEqual(["kpi.missed"]);
  });

  it("one the change did not see (recorded meanwhile) fails when the job reaches it", async () => {
    const id = await pendingKpiMissed("/raced");
    await sql`update webhooks set events = array['report.missing'] where id = ${id}`.execute(
      t.database.db,
    );
    await withJob(async () => {
      await eventually(async () => (await log(KEYS.acme, id))[0]?.status === "failed", "failed");
    });
    expect(await log(KEYS.acme, id)).toMatchObject([
      { attempts: 0, lastError: "not sent: the webhook no longer subscribes to this event type" },
    ]);
    expect(receiver.at("/raced")).toEqual([]);
  });
});
