import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/database.js";
import { onPostgres } from "../helpers/database.js";
import { baseFixture } from "../helpers/fixture.js";
import {
  adminUrl,
  createDatabase,
  START_TIMEOUT_MS,
  startServer,
  stopAllServers,
  stopServer,
  writeSeed,
} from "./support.js";

/**
 * `serve` runs the webhook event producer: its first pass starts with the server (it writes
 * the "notifications started" marker) and SIGTERM waits for a pass in progress, then exits 0.
 * A real process, on the suite's database.
 */
let dir: string;
let seedFile: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "tr-webhook-events-"));
  seedFile = writeSeed(dir, baseFixture());
});
afterAll(async () => {
  await stopAllServers();
  rmSync(dir, { recursive: true, force: true });
});

describe("serve and the webhook event producer", () => {
  it(
    "starts the producer with the server and stops it on SIGTERM",
    async () => {
      const postgres =
        onPostgres && adminUrl !== undefined ? await createDatabase(adminUrl) : undefined;
      try {
        const dataDir = join(dir, "data");
        const env: Record<string, string> = postgres
          ? { DATABASE_URL: postgres.url }
          : { DATA_DIR: dataDir };
        const server = await startServer({ seedFile, env });
        await stopServer(server);
        expect(await server.exited).toEqual({ code: 0, signal: null });
        const database = await openDatabase(
          postgres
            ? {
                kind: "postgres",
                url: postgres.url,
                poolSize: 1,
                statementTimeoutMs: 10_000,
                connectTimeoutMs: 10_000,
              }
            : { kind: "pglite", dataDir },
        );
        try {
          const r = await sql<{ n: number }>`
            select count(*)::int as n from webhook_event_producer`.execute(database.db);
          expect(r.rows[0]?.n).toBe(1);
        } finally {
          await database.close();
        }
      } finally {
        await postgres?.drop();
      }
    },
    2 * START_TIMEOUT_MS,
  );
});
