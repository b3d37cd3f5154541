import { randomUUID } from "node:crypto";
import type { LookupAddress } from "node:dns";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebhookDeliveries } from "../src/jobs/webhook-deliveries.js";
import { loadFixture } from "../src/services/fixtures.js";
import { openDatabase } from "../src/store/database.js";
import { createStores, type Stores } from "../src/store/stores.js";
import { accountabilityFixture } from "./helpers/accountability.js";
import { freshDatabase, onPostgres, type TestDatabase } from "./helpers/database.js";
import { eventually, type Receiver, startReceiver } from "./helpers/webhook-receiver.js";

/**
 * The delivery queue under the job: target safety at every attempt (without the development
 * flag nothing reaches a loopback address, whatever the name resolved to when it was
 * subscribed), disabling after 5 days of failures, and several workers on one database
 * making each attempt once.
 */
let db: TestDatabase;
let receiver: Receiver;
const NOW = new Date();
const SECRET = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;

beforeAll(async () => {
  db = await freshDatabase();
  await loadFixture(db.stores, accountabilityFixture(), NOW);
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await db?.close();
});

async function endpoint(url: string, organizationId = "acme") {
  const id = randomUUID();
  await db.db
    .insertInto("webhooks")
    .values({
      id,
      organization_id: organizationId,
      url,
      events: ["*"],
      description: null,
      secret: SECRET,
    })
    .execute();
  return id;
}

async function test(webhookId: string, count = 1) {
  await db.stores.webhookEvents.publish(
    Array.from({ length: count }, () => ({
      type: "webhook.test" as const,
      data: { webhookId },
      organizationId: "acme",
      baseCoinId: null,
      occurredAt: new Date(),
      dedupKey: null,
      webhookId,
    })),
    new Date(),
  );
}

const deliveriesOf = (webhookId: string) =>
  db.db.selectFrom("webhook_deliveries").selectAll().where("webhook_id", "=", webhookId).execute();

function job(
  stores: Stores,
  options: { allowInsecure: boolean; lookup?: never } = { allowInsecure: false },
) {
  return startWebhookDeliveries(stores, {
    timeoutMs: 2_000,
    retrySchedule: [3600],
    concurrency: 4,
    pollMs: 50,
    ...options,
  });
}

describe("target safety at every attempt", () => {
  it("refuses loopback and http targets when insecure targets are not allowed", async () => {
    const plain = await endpoint(receiver.url("/plain"));
    const worker = job(db.stores);
    try {
      await test(plain);
      const [delivery] = await eventually(async () => {
        const rows = await deliveriesOf(plain);
        return rows[0]?.attempts === 1 && rows;
      }, "the refused attempt");
      expect(delivery?.last_error).toMatch(/^refused: URL must use https/);
      expect(delivery?.status).toBe("pending");
    } finally {
      await worker.stop();
    }
    expect(receiver.at("/plain")).toEqual([]);
  });

  it("connects only to the address it checked: a name that now resolves to loopback is refused (DNS rebinding)", async () => {
    // As if rebind.example had resolved to a public address when it was subscribed.
    const rebinding = await endpoint(`https://rebind.example:${receiver.port}/rebind`);
    const literal = await endpoint(`https://127.0.0.1:${receiver.port}/literal`);
    const lookup = ((
      _host: string,
      _options: unknown,
      callback: (e: null, a: LookupAddress[]) => void,
    ) => callback(null, [{ address: "127.0.0.1", family: 4 }])) as never;
    const worker = job(db.stores, { allowInsecure: false, lookup });
    try {
      await test(rebinding);
      await test(literal);
      const [byName] = await eventually(async () => {
        const rows = await deliveriesOf(rebinding);
        return rows[0]?.attempts === 1 && rows;
      }, "the refused attempt");
      expect(byName?.last_error).toMatch(/refused: 127\.0\.0\.1 is not a public address/);
      const [byAddress] = await eventually(async () => {
        const rows = await deliveriesOf(literal);
        return rows[0]?.attempts === 1 && rows;
      }, "the refused attempt");
      expect(byAddress?.last_error).toBe("refused: 127.0.0.1 is not a public address");
    } finally {
      await worker.stop();
    }
    expect(receiver.received.filter((r) => r.path !== "/plain")).toEqual([]);
  });
});

describe("failing endpoints", () => {
  it("disables an endpoint whose deliveries all failed for 5 days, and fails its pending ones", async () => {
    const failing = await endpoint(receiver.url("/failing"));
    receiver.answer("/failing", 500, 500, 500);
    await db.db
      .updateTable("webhooks")
      .set({ failing_since: new Date(Date.now() - 5 * 24 * 3600 * 1000 - 60_000) })
      .where("id", "=", failing)
      .execute();
    const worker = job(db.stores, { allowInsecure: true });
    try {
      await test(failing);
      await eventually(async () => {
        const row = await db.db
          .selectFrom("webhooks")
          .select("disabled")
          .where("id", "=", failing)
          .executeTakeFirst();
        return row?.disabled;
      }, "the endpoint to be disabled");
    } finally {
      await worker.stop();
    }
    const [delivery] = await deliveriesOf(failing);
    expect(delivery).toMatchObject({ status: "failed", attempts: 1 });
    // It was sent: its error says what the receiver answered, not "not sent".
    expect(delivery?.last_error).toMatch(
      /^the webhook was disabled after failing for 5 days; last attempt: HTTP 500/,
    );
  });

  it("keeps an endpoint that failed for less than 5 days", async () => {
    const recent = await endpoint(receiver.url("/recent"));
    receiver.answer("/recent", 500);
    const worker = job(db.stores, { allowInsecure: true });
    try {
      await test(recent);
      await eventually(async () => (await deliveriesOf(recent))[0]?.attempts === 1, "an attempt");
    } finally {
      await worker.stop();
    }
    const row = await db.db
      .selectFrom("webhooks")
      .selectAll()
      .where("id", "=", recent)
      .executeTakeFirstOrThrow();
    expect(row.disabled).toBe(false);
    expect(row.failing_since).not.toBeNull();
  });
});

describe("a slow endpoint", () => {
  it("takes at most its share of the attempts: the other endpoints' deliveries go on", async () => {
    const slow = await endpoint(receiver.url("/slow"));
    const fast = await endpoint(receiver.url("/fast"));
    receiver.hang("/slow");
    await test(slow, 10);
    await test(fast);
    const worker = job(db.stores, { allowInsecure: true });
    try {
      await eventually(() => receiver.at("/fast").length === 1, "the fast endpoint's delivery");
      // Without the cap, the fast delivery (queued last) would wait for all ten slow ones.
      expect(receiver.at("/slow").length).toBeLessThan(10);
    } finally {
      receiver.hang("/slow", false);
      await worker.stop();
    }
  });
});

describe("several workers on one database", () => {
  it("make each attempt once", async () => {
    const shared = await endpoint(receiver.url("/shared"));
    await test(shared, 200);
    // On PostgreSQL each worker has a pool of its own, as separate `serve` processes would.
    const others = onPostgres
      ? await Promise.all([openDatabase(db.config), openDatabase(db.config)])
      : [];
    const workers = [db.stores, ...others.map((o) => createStores(o.db))].map((stores) =>
      job(stores, { allowInsecure: true }),
    );
    try {
      await eventually(
        async () => {
          const rows = await deliveriesOf(shared);
          return rows.every((r) => r.status === "succeeded");
        },
        "every delivery",
        90_000,
      );
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      await Promise.all(others.map((o) => o.close()));
    }
    const ids = receiver.at("/shared").map((r) => r.headers["webhook-id"]);
    expect(ids).toHaveLength(200);
    expect(new Set(ids).size).toBe(200);
    const rows = await deliveriesOf(shared);
    expect(rows.every((r) => r.attempts === 1)).toBe(true);
  });
});

describe("the per-endpoint cap over several workers", () => {
  it("holds over every worker on the database, not per worker", async () => {
    const paths = ["/capped-a", "/capped-b"];
    const ids = await Promise.all(paths.map((path) => endpoint(receiver.url(path))));
    for (const path of paths) receiver.slow(path, 150);
    for (const id of ids) await test(id, 24);
    // Two workers of 8 slots each: 2 attempts per endpoint (a quarter of 8) over both, where a
    // cap held per worker would allow 4. On PostgreSQL each has a pool of its own.
    const others = onPostgres ? [await openDatabase(db.config)] : [];
    const stores = [db.stores, others[0] ? createStores(others[0].db) : db.stores];
    const workers = stores.map((s) =>
      startWebhookDeliveries(s, {
        timeoutMs: 5_000,
        retrySchedule: [3600],
        concurrency: 8,
        pollMs: 20,
        allowInsecure: true,
      }),
    );
    try {
      await eventually(
        async () => {
          const rows = (await Promise.all(ids.map(deliveriesOf))).flat();
          return rows.every((r) => r.status === "succeeded");
        },
        "every delivery",
        60_000,
      );
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      await Promise.all(others.map((o) => o.close()));
    }
    for (const path of paths) {
      expect(receiver.at(path)).toHaveLength(24);
      expect(new Set(receiver.at(path).map((r) => r.headers["webhook-id"])).size).toBe(24);
      expect(receiver.peak(path)).toBe(2);
    }
  });
});

describe("a backlog of an endpoint at its share", () => {
  const settleAll = () =>
    db.db
      .updateTable("webhook_deliveries")
      .set({ status: "failed", next_attempt_at: null })
      .where("status", "=", "pending")
      .execute();
  const claim = (limit: number) =>
    db.stores.transaction((tx) =>
      tx.webhookDeliveries.claim(
        new Date(Date.now() + 1_000),
        limit,
        new Date(Date.now() + 60_000),
        { perEndpoint: 2, perOrganization: 100, reserved: 0 },
      ),
    );

  it("does not hold up a later delivery of another endpoint", async () => {
    await settleAll();
    const backlogged = await endpoint(receiver.url("/backlog"));
    const behind = await endpoint(receiver.url("/behind"));
    // More than the claim's first look (the oldest 32 due, for a claim of up to 4) can see past.
    await test(backlogged, 150);
    await db.db
      .updateTable("webhook_deliveries")
      .set({ next_attempt_at: new Date(Date.now() - 3_600_000) })
      .where("webhook_id", "=", backlogged)
      .execute();
    await test(behind);
    try {
      expect((await claim(2)).map((d) => d.webhookId)).toEqual([backlogged, backlogged]);
      // The backlogged endpoint has its 2 in flight: the next claim finds the one behind.
      expect((await claim(4)).map((d) => d.webhookId)).toEqual([behind]);
    } finally {
      await settleAll();
    }
  });
});

describe("read scope at every attempt", () => {
  it("sends a project nothing more about a coin it no longer owns", async () => {
    const webhookId = await endpoint("http://127.0.0.1:9/never", "chainlink-labs");
    const event = {
      type: "report.missing" as const,
      data: {
        organizationId: "acme",
        baseCoinId: "chainlink",
        exchangeId: "binance",
        quote: "tether",
        instrumentType: "spot" as const,
        date: "2026-03-01",
        deadline: "2026-03-02T12:00:00.000Z",
      },
      organizationId: "acme",
      baseCoinId: "chainlink",
      occurredAt: new Date(),
      dedupKey: `scope-${randomUUID()}`,
    };
    await db.stores.webhookEvents.publish([event], new Date());
    expect(await deliveriesOf(webhookId)).toHaveLength(1);
    await db.db
      .deleteFrom("organization_coins")
      .where("organization_id", "=", "chainlink-labs")
      .where("base_coin_id", "=", "chainlink")
      .execute();
    const claimed = await db.stores.transaction((tx) =>
      tx.webhookDeliveries.claim(new Date(Date.now() + 1_000), 100, new Date(Date.now() + 60_000)),
    );
    expect(claimed.filter((d) => d.webhookId === webhookId)).toEqual([]);
    const [delivery] = await deliveriesOf(webhookId);
    expect(delivery?.status).toBe("failed");
    expect(delivery?.last_error).toMatch(/no longer read/);
  });
});
