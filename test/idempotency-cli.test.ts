import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { submitBatches } from "../src/cli/submission/send-batches.js";
import type { RetryNotice } from "../src/cli/submission/submission-types.js";
import { IDEMPOTENCY_LEASE_MS } from "../src/services/idempotency.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Record } from "./helpers/fixture.js";
import { dayAfter, rowCounts } from "./helpers/submission.js";

let t: TestApp;
let proxy: DroppingProxy;
beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ host: "127.0.0.1", port: 0 });
  proxy = await DroppingProxy.start((t.app.server.address() as AddressInfo).port);
});
afterAll(async () => {
  await proxy?.close();
  await t?.close();
});

/**
 * A loopback proxy in front of the service that can lose an answer: the request reaches the
 * service, which stores the batch, commits and starts answering; at the answer's first bytes
 * the proxy closes both connections, as a timeout or a network failure would.
 */
class DroppingProxy {
  private answersToDrop = 0;
  dropped = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server) {}

  static async start(upstreamPort: number): Promise<DroppingProxy> {
    const server = createServer();
    const proxy = new DroppingProxy(server);
    server.on("connection", (client) => proxy.relay(client, upstreamPort));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  dropNextAnswers(count: number): void {
    this.answersToDrop = count;
  }

  private relay(client: Socket, upstreamPort: number): void {
    const upstream = connect(upstreamPort, "127.0.0.1");
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
      socket.on("error", () => undefined);
    }
    client.pipe(upstream);
    upstream.on("data", (chunk: Buffer) => {
      if (this.answersToDrop > 0) {
        this.answersToDrop -= 1;
        this.dropped += 1;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    upstream.on("end", () => client.end());
    client.on("close", () => upstream.destroy());
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

let day = 0;
function records(count: number): Record<string, unknown>[] {
  const first = day;
  day += count;
  return Array.from({ length: count }, (_, i) =>
    v2Record({ date: dayAfter("2024-06-01", first + i) }),
  );
}

function send(
  data: Record<string, unknown>[],
  options: { dryRun?: boolean; keySalt?: string } = {},
) {
  const retries: RetryNotice[] = [];
  const result = submitBatches({
    url: proxy.url,
    key: KEYS.acme,
    version: "v2",
    dryRun: options.dryRun ?? false,
    records: data,
    batchSize: 2,
    keySalt: options.keySalt,
    sleep: async () => undefined,
    onRetry: (notice) => retries.push(notice),
  });
  return { result, retries };
}

describe("trading-reports submit with a lost answer", () => {
  it("retries a batch whose answer was lost after the service stored it: replayed, not applied twice", async () => {
    const data = records(6);
    const before = await rowCounts(t);
    proxy.dropNextAnswers(1);
    const { result, retries } = send(data);
    // The replayed answer is this run's own first attempt's: its counts are this run's.
    expect(await result).toMatchObject({
      created: 6,
      updated: 0,
      rejected: [],
      failedBatches: [],
      replayedBatches: 0,
      replayedRecords: 0,
    });
    expect(proxy.dropped).toBe(1);
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ batch: 1, attempt: 1 });
    const after = await rowCounts(t);
    expect(after.versions - before.versions).toBe(6);
    expect(after.reports - before.reports).toBe(6);
  });

  it("answers a rerun of the same batches from the kept 201s, storing nothing again", async () => {
    const data = records(4);
    expect(await send(data).result).toMatchObject({ created: 4, replayedBatches: 0 });
    const before = await rowCounts(t);
    // Stored by the earlier run: this run changed nothing, and says so.
    expect(await send(data).result).toMatchObject({
      created: 0,
      updated: 0,
      replayedBatches: 2,
      replayedRecords: 4,
    });
    expect(await rowCounts(t)).toEqual(before);
    // --fresh-keys: keys of that run only, so the batches are applied again (updated).
    const fresh = await send(data, { keySalt: "run-2" }).result;
    expect(fresh).toMatchObject({ created: 0, updated: 4, replayedBatches: 0 });
    expect((await rowCounts(t)).versions).toBe(before.versions + 4);
  });

  it("keys a dry run apart from the real submission of the same batch", async () => {
    const data = records(2);
    expect(await send(data, { dryRun: true }).result).toMatchObject({
      created: 2,
      failedBatches: [],
    });
    const stored = await send(data).result;
    expect(stored).toMatchObject({ created: 2, failedBatches: [], replayedBatches: 0 });
  });

  it("answers a dry run rerun anew: the reports changed since the first", async () => {
    const data = records(2);
    expect(await send(data, { dryRun: true }).result).toMatchObject({ created: 2, updated: 0 });
    expect(await send(data).result).toMatchObject({ created: 2, replayedBatches: 0 });
    // Replayed, the first dry run's answer would say both would be created.
    const again = await send(data, { dryRun: true }).result;
    expect(again).toMatchObject({ created: 0, updated: 2, replayedBatches: 0 });
  });

  it("still replays a dry run's batch to its own retry, after the answer was lost", async () => {
    const data = records(2);
    proxy.dropNextAnswers(1);
    const { result, retries } = send(data, { dryRun: true });
    expect(await result).toMatchObject({ created: 2, failedBatches: [], replayedBatches: 0 });
    expect(retries).toHaveLength(1);
  });
});

describe("trading-reports submit while a batch's Idempotency-Key is in flight", () => {
  const IN_PROGRESS_BODY = JSON.stringify({
    statusCode: 409,
    error: "Conflict",
    message: "A request with this Idempotency-Key is in progress",
  });
  /** Answers 409 while `inFlight()` holds, then lets the request through to the service. */
  function keyInFlight(inFlight: () => boolean): typeof fetch {
    return async (input, init) =>
      inFlight()
        ? new Response(IN_PROGRESS_BODY, {
            status: 409,
            headers: { "content-type": "application/json" },
          })
        : fetch(input, init);
  }
  function waits() {
    const delays: number[] = [];
    const total = () => delays.reduce((a, b) => a + b, 0);
    return { delays, total, sleep: async (ms: number) => void delays.push(ms) };
  }

  it("keeps retrying a 409 for as long as the key's lease (60 s), then stores the batch", async () => {
    const data = records(2);
    const clock = waits();
    // The earlier attempt's lease runs out just before the minute is over.
    const serverWithKeyInFlight = keyInFlight(() => clock.total() < IDEMPOTENCY_LEASE_MS - 1_000);
    const result = await submitBatches({
      url: proxy.url,
      key: KEYS.acme,
      version: "v2",
      dryRun: false,
      records: data,
      fetch: serverWithKeyInFlight,
      sleep: clock.sleep,
    });
    expect(result).toMatchObject({ created: 2, failedBatches: [] });
    expect(clock.delays.length).toBeGreaterThan(5);
    expect(Math.max(...clock.delays)).toBeLessThanOrEqual(5_000);
  });

  it("gives a batch up once its 409s outlast the lease, other failures keeping their own retries", async () => {
    const clock = waits();
    const result = await submitBatches({
      url: proxy.url,
      key: KEYS.acme,
      version: "v2",
      dryRun: false,
      records: records(1),
      fetch: keyInFlight(() => true),
      sleep: clock.sleep,
      maxRetries: 1,
    });
    expect(result.failedBatches).toMatchObject([{ batch: 1, status: 409 }]);
    expect(clock.total()).toBeGreaterThanOrEqual(IDEMPOTENCY_LEASE_MS);
    expect(clock.total()).toBeLessThanOrEqual(IDEMPOTENCY_LEASE_MS + 10_000);
  });
});
