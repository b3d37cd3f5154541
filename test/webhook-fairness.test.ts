import { randomUUID } from "node:crypto";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebhookDeliveries } from "../src/jobs/webhook-deliveries.js";
import { loadFixture } from "../src/services/fixtures.js";
import { accountabilityFixture } from "./helpers/accountability.js";
import { freshDatabase, type TestDatabase } from "./helpers/database.js";
import { eventually, type Receiver, startReceiver } from "./helpers/webhook-receiver.js";

/**
 * Deliveries shared out fairly (README "Notifications", "At least once"): an organization
 * whose receivers hang holds up its own deliveries, never another organization's; the caps
 * hold in the claim, over every process's leases; a 2xx answer whose body never ends frees its
 * slot at once.
 */
let db: TestDatabase;
let receiver: Receiver;
const SECRET = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
const SHARES = { perEndpoint: 2, perOrganization: 4, reserved: 2 };

beforeAll(async () => {
  db = await freshDatabase();
  await loadFixture(db.stores, accountabilityFixture(), new Date());
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await db?.close();
});

async function endpoint(organizationId: string, url: string) {
  const id = randomUUID();
  await db.db
    .insertInto("webhooks")
    .values({ id, organization_id: organizationId, url, events: ["*"], secret: SECRET })
    .execute();
  return id;
}

/** `count` webhook.test events for the endpoint, due now. */
async function test(organizationId: string, webhookId: string, count = 1) {
  await db.stores.webhookEvents.publish(
    Array.from({ length: count }, () => ({
      type: "webhook.test" as const,
      data: { webhookId },
      organizationId,
      baseCoinId: null,
      occurredAt: new Date(),
      dedupKey: null,
      webhookId,
    })),
    new Date(),
  );
}

/** Nothing pending (each test arranges its own queue). */
const settleAll = () =>
  db.db
    .updateTable("webhook_deliveries")
    .set({ status: "failed", next_attempt_at: null, claimed_until: null })
    .where("status", "=", "pending")
    .execute();

const claim = (limit: number) =>
  db.stores.transaction((tx) =>
    tx.webhookDeliveries.claim(
      new Date(Date.now() + 1_000),
      limit,
      new Date(Date.now() + 60_000),
      SHARES,
    ),
  );

/** A server whose every request waits for the test (held until `close`). */
async function server(handle: (response: ServerResponse) => void) {
  const held: Server = createServer((request, response) => {
    request.resume();
    request.on("end", () => handle(response));
  });
  await new Promise<void>((done) => held.listen(0, "127.0.0.1", done));
  return {
    url: `http://127.0.0.1:${(held.address() as AddressInfo).port}/hook`,
    close: () =>
      new Promise<void>((done) => {
        held.closeAllConnections();
        held.close(() => done());
      }),
  };
}

describe("an organization whose receivers hang", () => {
  it("does not hold up another organization's delivery (10 endpoints with 10 deliveries each)", async () => {
    await settleAll();
    let hanging = 0;
    const stuck = await server(() => {
      hanging += 1;
    });
    for (let i = 0; i < 10; i++) await test("acme", await endpoint("acme", stuck.url), 10);
    const healthy = await endpoint("globex", receiver.url("/healthy"));
    const job = startWebhookDeliveries(db.stores, {
      allowInsecure: true,
      timeoutMs: 60_000,
      retrySchedule: [3600],
      concurrency: 8,
      pollMs: 50,
    });
    try {
      await eventually(() => hanging >= 4, "acme's attempts to hang");
      await test("globex", healthy);
      // Before: acme's endpoints took all 8 slots, and globex waited for a 60 s timeout.
      await eventually(() => receiver.at("/healthy").length === 1, "globex's delivery");
      expect(hanging).toBe(4);
    } finally {
      await stuck.close();
      await job.stop();
    }
  });
});

describe("the claim", () => {
  it("gives one organization at most its share, counting the leases of every process", async () => {
    await settleAll();
    for (let i = 0; i < 3; i++) await test("acme", await endpoint("acme", "http://x.invalid/"), 5);
    const other = await endpoint("globex", "http://x.invalid/");
    await test("globex", other);
    const first = await claim(8);
    expect(first.filter((d) => d.webhookId === other)).toHaveLength(1);
    expect(first.length - 1).toBe(SHARES.perOrganization);
    // As another process would: acme's leases count, so it gets nothing more.
    expect(await claim(8)).toEqual([]);
  });

  it("keeps its reserved slots for an organization with no attempt in flight", async () => {
    await settleAll();
    const busy = await endpoint("acme", "http://x.invalid/");
    await test("acme", busy, 5);
    expect((await claim(1)).map((d) => d.webhookId)).toEqual([busy]);
    const idle = await endpoint("globex", "http://x.invalid/");
    await test("globex", idle);
    // Two slots, both reserved: acme's older backlog waits, globex's delivery is taken.
    expect((await claim(2)).map((d) => d.webhookId)).toEqual([idle]);
  });
});

describe("a 2xx answer whose body never ends", () => {
  it("is a success recorded at once: its slot is free for the next delivery", async () => {
    await settleAll();
    const endless = await server((response) => {
      response.writeHead(200, { "content-type": "text/plain" });
      response.write("ok, and more to come");
    });
    const first = await endpoint("acme", endless.url);
    await test("acme", first);
    const next = await endpoint("globex", receiver.url("/after-endless"));
    await test("globex", next);
    const job = startWebhookDeliveries(db.stores, {
      allowInsecure: true,
      timeoutMs: 60_000,
      retrySchedule: [3600],
      concurrency: 1,
      pollMs: 50,
    });
    try {
      // Before: the one slot stayed taken until the 60 s timeout.
      await eventually(() => receiver.at("/after-endless").length === 1, "the next delivery");
      const [row] = await db.db
        .selectFrom("webhook_deliveries")
        .selectAll()
        .where("webhook_id", "=", first)
        .execute();
      expect(row).toMatchObject({ status: "succeeded", attempts: 1, last_status_code: 200 });
    } finally {
      await endless.close();
      await job.stop();
    }
  });
});
