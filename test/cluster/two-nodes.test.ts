import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { v2Record } from "../helpers/fixture.js";
import { KEYS, nodeFixture, READER_KEYS, seedNodes } from "./helpers/node-world.js";
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
 * Issue 17, part 3: what two `serve` processes on one database must agree on. Rate limits are
 * the cluster's (RATE_LIMIT_STORE=database: the limit is the sum over nodes, not per node), an
 * Idempotency-Key answered by one node is replayed by the other, and a change of reference
 * data made by another process is seen by both within REFERENCE_DATA_CHECK_MS.
 */
const PER_KEY = 10;
const AUTH_FAILURES = 3;

let db: NodeDatabase;
let a: ServeNode;
let b: ServeNode;

beforeAll(async () => {
  db = await nodeDatabase();
  await seedNodes(db.url);
  const env = {
    DATABASE_URL: db.url,
    RATE_LIMIT_STORE: "database",
    RATE_LIMIT_PER_MINUTE: String(PER_KEY),
    AUTH_FAILURES_PER_MINUTE: String(AUTH_FAILURES),
    REFERENCE_DATA_CHECK_MS: "500",
    DB_POOL_SIZE: "3",
  };
  const [portA, portB] = await Promise.all([freePort(), freePort()]);
  [a, b] = await Promise.all([startServe(portA, env), startServe(portB, env)]);
});

afterAll(async () => {
  await killServeNodes();
  await db?.drop();
});

const get = (node: ServeNode, path: string, key: string) =>
  fetch(`${node.url}${path}`, { headers: { authorization: key } });

describe("two nodes on one database", () => {
  it("replay an Idempotency-Key answered by the other node", async () => {
    const body = JSON.stringify({ data: [v2Record({ date: "2025-06-01" })] });
    const post = (node: ServeNode) =>
      fetch(`${node.url}/api/v2/report`, {
        method: "POST",
        headers: {
          authorization: KEYS.acme,
          "content-type": "application/json",
          "idempotency-key": "two-nodes-1",
        },
        body,
      });
    const first = await post(a);
    const firstBody = await first.text();
    expect(first.status).toBe(201);
    const replay = await post(b);
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.text()).toBe(firstBody);
    const versions = await db.query<{ n: string }>("select count(*) as n from report_versions");
    expect(versions[0]?.n).toBe("1");
  });

  it("see reference data changed by another process", async () => {
    // One key per node, polled once a second: within the small per-key limit of this file.
    const keyOf = (node: ServeNode) => (node === a ? READER_KEYS[0] : READER_KEYS[1]);
    const exchangesOf = async (node: ServeNode) => {
      const response = await get(node, "/api/v1/exchanges", keyOf(node));
      expect(response.status).toBe(200);
      const body = (await response.json()) as { items: { id: string }[] };
      return body.items.map((e) => e.id);
    };
    // Both nodes have the reference data in memory before it changes.
    expect(await exchangesOf(a)).not.toContain("newdex");
    expect(await exchangesOf(b)).not.toContain("newdex");
    const fixture = nodeFixture();
    fixture.exchanges.push({
      id: "newdex",
      name: "New DEX",
      spot: true,
      derivatives: false,
      marketData: true,
    });
    await seedNodes(db.url, fixture);
    for (const node of [a, b])
      await until(
        async () => (await exchangesOf(node)).includes("newdex"),
        "the new exchange",
        8_000,
        1_000,
      );
  });

  it("share the per-key rate limit: the limit is the sum over both nodes", async () => {
    const statuses: number[] = [];
    const remaining: string[] = [];
    for (let i = 0; i < PER_KEY + 4; i++) {
      const response = await get(i % 2 === 0 ? a : b, "/api/v1/exchanges", KEYS.globex);
      await response.arrayBuffer();
      statuses.push(response.status);
      remaining.push(response.headers.get("x-ratelimit-remaining") ?? "");
    }
    expect(statuses).toEqual([...Array(PER_KEY).fill(200), 429, 429, 429, 429]);
    expect(remaining.slice(0, PER_KEY)).toEqual(
      Array.from({ length: PER_KEY }, (_, i) => String(PER_KEY - 1 - i)),
    );
  });

  // Last: it leaves 127.0.0.1 blocked for keys that have not authenticated on a node yet.
  it("share the failed-authentication budget of an address", async () => {
    const wrong = "not-a-key-0123456789abcdef0123456789";
    const statuses: number[] = [];
    for (let i = 0; i < AUTH_FAILURES + 2; i++) {
      const response = await get(i % 2 === 0 ? a : b, "/api/v1/exchanges", wrong);
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    expect(statuses).toEqual([...Array(AUTH_FAILURES).fill(401), 429, 429]);
  });
});
