import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Haproxy, startHaproxy } from "./helpers/haproxy.js";
import { distinctBatches, KEYS, keyText, type RecordKey, seedNodes } from "./helpers/node-world.js";
import {
  freePort,
  killServeNodes,
  type NodeDatabase,
  nodeDatabase,
  type ServeNode,
  startServe,
  until,
} from "./helpers/serve-nodes.js";

/**
 * Issue 17, part 3: HAProxy health-checking `/readyz` in front of three `serve` processes on
 * one database. A rolling restart (SIGTERM one, wait until it exited, start it again, wait
 * until HAProxy has it back, next) under continuous ingest by 4 clients loses no acknowledged
 * record and answers no client with a 5xx (nor any other failure).
 */
const CLIENTS = 4;
const BATCH = 20;
const DRAIN_MS = 1_500; // > 2 failed checks at 200 ms, with room for a busy machine

let db: NodeDatabase;
let haproxy: Haproxy | undefined;
const nodes: ServeNode[] = [];
let env: Record<string, string>;

beforeAll(async () => {
  db = await nodeDatabase();
  await seedNodes(db.url);
  env = {
    DATABASE_URL: db.url,
    SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
    RATE_LIMIT_STORE: "database",
    TRUST_PROXY: "127.0.0.1",
    RATE_LIMIT_PER_MINUTE: "1000000",
    DB_POOL_SIZE: "4",
  };
  const ports = await Promise.all([freePort(), freePort(), freePort()]);
  nodes.push(...(await Promise.all(ports.map((port) => startServe(port, env)))));
  haproxy = await startHaproxy(nodes.map((n, i) => ({ name: `node${i + 1}`, port: n.port })));
});

afterAll(async () => {
  await killServeNodes();
  await haproxy?.stop();
  await db?.drop();
});

type Outcome = { status: number | string; keys: RecordKey[] };

/** One client: posts its batches one after another (20 ms apart) until `stop` says so. */
async function ingest(client: number, url: string, stop: () => boolean, outcomes: Outcome[]) {
  for (const batch of distinctBatches(client, CLIENTS, BATCH)) {
    if (stop()) return;
    const keys = batch.map((r) => ({ exchangeId: String(r.exchangeId), date: String(r.date) }));
    try {
      const response = await fetch(`${url}/api/v2/report`, {
        method: "POST",
        headers: { authorization: KEYS.acme, "content-type": "application/json" },
        body: JSON.stringify({ data: batch }),
      });
      await response.arrayBuffer();
      outcomes.push({ status: response.status, keys });
    } catch (error) {
      outcomes.push({ status: `network error: ${(error as Error).message}`, keys });
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`client ${client} ran out of distinct keys`);
}

describe("rolling restart behind HAProxy", () => {
  it("loses no acknowledged record and answers no 5xx", async () => {
    if (haproxy === undefined) throw new Error("no haproxy");
    const proxy = haproxy;
    const outcomes: Outcome[] = [];
    let stopping = false;
    const clients = Array.from({ length: CLIENTS }, (_, c) =>
      ingest(c, proxy.url, () => stopping, outcomes),
    );
    const acknowledged = () => outcomes.filter((o) => o.status === 201).length;
    const restarts: { node: string; exitCode: number | null; ackedWhileAway: number }[] = [];
    try {
      progress("nodes and HAProxy up; ingest starts");
      await until(() => acknowledged() >= 20, "ingest under way");
      for (const [i, node] of nodes.entries()) {
        const name = `node${i + 1}`;
        const before = acknowledged();
        progress(`SIGTERM ${name} (${before} batches acknowledged)`);
        const exitCode = await node.stop("SIGTERM");
        await proxy.waitUntil(name, "DOWN");
        progress(`${name} exited (${exitCode}) and is out of HAProxy; starting it again`);
        const restarted = await startServe(node.port, env);
        nodes[i] = restarted;
        await proxy.waitUntil(name, "UP");
        progress(`${name} back in HAProxy`);
        restarts.push({ node: name, exitCode, ackedWhileAway: acknowledged() - before });
        await until(() => acknowledged() >= before + 40, "ingest after the restart");
      }
    } finally {
      stopping = true;
      await Promise.all(clients);
    }

    const counters = await proxy.counters();
    const failures = outcomes.filter((o) => o.status !== 201);
    console.log(
      `rolling restart: ${outcomes.length} batches (${acknowledged() * BATCH} records acknowledged), ` +
        `restarts ${JSON.stringify(restarts)}, HAProxy retries ${counters.retries}, redispatches ${counters.redispatches}`,
    );
    expect(restarts.map((r) => r.exitCode)).toEqual([0, 0, 0]);
    expect(failures.map((f) => f.status)).toEqual([]);
    const stored = new Set(
      (
        await db.query<{ exchange_id: string; date: string }>(
          "select exchange_id, date::text as date from reports where organization_id = 'acme'",
        )
      ).map((row) => keyText({ exchangeId: row.exchange_id, date: row.date })),
    );
    const ackedKeys = outcomes.filter((o) => o.status === 201).flatMap((o) => o.keys);
    expect(ackedKeys.length).toBeGreaterThan(CLIENTS * BATCH * 10);
    expect(ackedKeys.filter((k) => !stored.has(keyText(k)))).toEqual([]);
  }, 900_000);
});

const started = Date.now();
const progress = (what: string) =>
  console.log(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${what}`);
