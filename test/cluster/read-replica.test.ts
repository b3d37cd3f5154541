import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { loadFixture } from "../../src/services/fixtures.js";
import { createSystem, type System } from "../../src/system.js";
import { baseFixture, KEYS, v2Record } from "../helpers/fixture.js";
import { type Cluster, startCluster } from "./helpers/postgres-cluster.js";

// README "Read replica", on a real primary and streaming replica (pg_basebackup).

const SECOND_ACME_KEY = "acme-second-key-0123456789abcdef01234";

type Node = { system: System; app: FastifyInstance };

let cluster: Cluster;
const nodes: Node[] = [];

/** One service process's worth of state (its own pools, caches, router), in this process. */
async function startNode(env: Record<string, string> = {}): Promise<Node> {
  const config = loadConfig({
    DATABASE_URL: cluster.primaryUrl("tr"),
    DATABASE_READ_URL: cluster.replicaUrl("tr"),
    REFERENCE_DATA_CHECK_MS: "0",
    LOG_LEVEL: "silent",
    READ_REPLICA_MAX_LAG_MS: "600000",
    ...env,
  });
  const system = await createSystem(config);
  const app = await system.http(false);
  const node = { system, app };
  nodes.push(node);
  return node;
}

const list = async (node: Node, key: string) => {
  const r = await node.app.inject({ url: "/api/v1/reports", headers: { authorization: key } });
  expect(r.statusCode, r.body).toBe(200);
  return r.json<{ totalCount: number }>().totalCount;
};

const readiness = async (node: Node) => {
  const r = await node.app.inject({ url: "/readyz" });
  return { statusCode: r.statusCode, body: r.json() };
};

async function eventually(check: () => Promise<void>, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

beforeAll(async () => {
  cluster = await startCluster({ replica: true });
  await cluster.admin("create database tr");
  const first = await startNode();
  const fixture = baseFixture();
  const acme = fixture.organizations.find((o) => o.id === "acme");
  acme?.apiKeys.push(SECOND_ACME_KEY);
  await loadFixture(first.system.stores, fixture, new Date());
  await cluster.replicaCaughtUp();
});

afterAll(async () => {
  for (const node of nodes) {
    await node.app.close();
    await node.system.close();
  }
  await cluster?.stop();
});

describe("read replica", () => {
  it("shows a key its own 201 through any process while replay is paused; other keys read the replica", async () => {
    const [writer] = nodes as [Node];
    const reader = await startNode();
    expect((await readiness(reader)).body).toEqual({
      status: "ok",
      readReplica: { status: "in_use", lagMs: 0 },
    });
    await cluster.pauseReplay();
    const response = await writer.app.inject({
      method: "POST",
      url: "/api/v2/report",
      headers: { authorization: KEYS.acme, "content-type": "application/json" },
      payload: JSON.stringify({ data: [v2Record()] }),
    });
    expect(response.statusCode, response.body).toBe(201);
    // The writing key, through the other process and through its own: its write is there.
    expect(await list(reader, KEYS.acme)).toBe(1);
    expect(await list(writer, KEYS.acme)).toBe(1);
    // Another key of the same organization reads the replica, which has not replayed it yet.
    expect(await list(reader, SECOND_ACME_KEY)).toBe(0);
    await cluster.resumeReplay();
    await cluster.replicaCaughtUp();
    await eventually(async () => expect(await list(reader, SECOND_ACME_KEY)).toBe(1));
  });

  it("reads on the primary while the replica lags past READ_REPLICA_MAX_LAG_MS, and says so", async () => {
    const strict = await startNode({ READ_REPLICA_MAX_LAG_MS: "1" });
    await cluster.pauseReplay();
    try {
      await nodes[0]?.system.stores.organizations.upsertOrganization("lag-probe", "Lag probe");
      await new Promise((resolve) => setTimeout(resolve, 50));
      await eventually(async () => {
        const ready = await readiness(strict);
        expect(ready.statusCode).toBe(200);
        expect(ready.body.readReplica.status).toBe("lagging");
        expect(ready.body.readReplica.lagMs).toBeGreaterThan(1);
      });
      await submitAs(strict, KEYS.acme, { date: "2025-03-02" });
      // The other key sees the new report: it reads the primary now.
      expect(await list(strict, SECOND_ACME_KEY)).toBe(2);
    } finally {
      await cluster.resumeReplay();
    }
  });

  it("falls back to the primary when the replica stops, and goes back when it returns", async () => {
    const [node] = nodes as [Node];
    await cluster.replicaCaughtUp();
    await cluster.stopReplica();
    try {
      expect(await list(node, SECOND_ACME_KEY)).toBe(2);
      await eventually(async () => {
        const ready = await readiness(node);
        expect(ready).toEqual({
          statusCode: 200,
          body: { status: "ok", readReplica: { status: "unreachable", lagMs: null } },
        });
      });
      expect(await list(node, KEYS.globex)).toBe(0);
    } finally {
      await cluster.startReplica();
    }
    await eventually(async () => {
      expect((await readiness(node)).body.readReplica.status).toBe("in_use");
    });
    expect(await list(node, SECOND_ACME_KEY)).toBe(2);
  });
});

async function submitAs(node: Node, key: string, overrides: Record<string, unknown>) {
  const response = await node.app.inject({
    method: "POST",
    url: "/api/v2/report",
    headers: { authorization: key, "content-type": "application/json" },
    payload: JSON.stringify({ data: [v2Record(overrides)] }),
  });
  expect(response.statusCode, response.body).toBe(201);
}
