import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { baseFixture, KEYS, v1Record, v2Record } from "../helpers/fixture.js";
import { samplesOf } from "../helpers/metrics.js";
import {
  adminUrl,
  call,
  createDatabase,
  startServer,
  stopAllServers,
  writeSeed,
} from "../reliability/support.js";

afterAll(stopAllServers);

/** A free loopback port (probed: bound, read, released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return address.port;
}

const day = (n: number) => new Date(Date.UTC(2022, 5, 1 + n)).toISOString().slice(0, 10);
const CLIENTS = 4;
const BATCHES = 24;
const BATCH = 50;

const targets = [
  { name: "PGlite in DATA_DIR", postgres: false },
  ...(adminUrl === undefined ? [] : [{ name: "PostgreSQL", postgres: true }]),
];

describe.each(targets)("serve with METRICS_PORT ($name)", ({ postgres }) => {
  it("counts a concurrent workload over HTTP exactly, on its own loopback port", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tr-metrics-"));
    const database =
      postgres && adminUrl !== undefined ? await createDatabase(adminUrl) : undefined;
    try {
      const metricsPort = await freePort();
      const server = await startServer({
        seedFile: writeSeed(dir, baseFixture()),
        env: {
          ...(database === undefined
            ? { DATA_DIR: join(dir, "data") }
            : { DATABASE_URL: database.url }),
          METRICS_PORT: String(metricsPort),
        },
      });
      // 4 clients, each its own batches of new records (v2), then every batch again (updates).
      const batches = Array.from({ length: BATCHES }, (_, b) =>
        Array.from({ length: BATCH }, (_, i) => v2Record({ date: day(b * BATCH + i) })),
      );
      const send = async (version: 1 | 2, body: unknown) =>
        call(server.base, `/api/v${version}/report`, { key: KEYS.acme, body });
      for (const round of [0, 1]) {
        const queue = [...batches];
        await Promise.all(
          Array.from({ length: CLIENTS }, async () => {
            for (let batch = queue.shift(); batch; batch = queue.shift()) {
              const reply = await send(2, {
                data: round ? batch.map((r) => ({ ...r, bidDepth50: 1 })) : batch,
              });
              expect(reply.status, JSON.stringify(reply.body)).toBe(201);
            }
          }),
        );
      }
      const rejected = await send(1, {
        data: [v1Record({ date: day(0), askDepth50: -5 }), v1Record()],
      });
      expect(rejected.status).toBe(400);
      expect((await call(server.base, "/metrics")).status).toBe(404);

      const scrape = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(scrape.status).toBe(200);
      const samples = samplesOf(await scrape.text());
      const records = (version: number, outcome: string) =>
        samples.get(
          `trading_reports_records_total{dry_run="false",outcome="${outcome}",version="${version}"}`,
        );
      expect(records(2, "created")).toBe(BATCHES * BATCH);
      expect(records(2, "updated")).toBe(BATCHES * BATCH);
      expect(records(1, "rejected")).toBe(2);
      expect(samples.get('trading_reports_problems_total{code="below_minimum",version="1"}')).toBe(
        1,
      );
      expect(
        samples.get(
          'trading_reports_http_request_duration_seconds_count{method="POST",route="/api/v2/report",status="201"}',
        ),
      ).toBe(2 * BATCHES);
      expect(samples.get("trading_reports_db_pool_acquires_total")).toBeGreaterThan(2 * BATCHES);

      // SIGTERM ends the metrics listener with the rest: the process exits 0.
      process.kill(server.pid, "SIGTERM");
      expect((await server.exited).code).toBe(0);
      await expect(fetch(`http://127.0.0.1:${metricsPort}/metrics`)).rejects.toThrow();
    } finally {
      await stopAllServers();
      await database?.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
