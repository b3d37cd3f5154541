import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_API_KEY } from "../../src/services/demo.js";
import { onPostgres } from "../helpers/database.js";
import { baseFixture } from "../helpers/fixture.js";
import {
  adminUrl,
  call,
  createDatabase,
  runCommand,
  START_TIMEOUT_MS,
  startServer,
  stopAllServers,
  stopServer,
  writeSeed,
} from "./support.js";

/**
 * `serve` as started by hand: `--demo` refuses a database that is not a demo database (issue
 * 11 item 9) unless `--force-demo`; HOST and PORT come from the environment, flags win (issue
 * 18). Real processes.
 */

const SLOW = 4 * START_TIMEOUT_MS;
let dir: string;
let seedFile: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "tr-serve-options-"));
  seedFile = writeSeed(dir, baseFixture());
});
afterAll(async () => {
  await stopAllServers();
  rmSync(dir, { recursive: true, force: true });
});

describe("serve --demo", () => {
  it(
    "refuses a PostgreSQL DATABASE_URL before connecting to it",
    async () => {
      // Nothing listens on port 1: had it tried to connect, it would fail with ECONNREFUSED.
      const result = await runCommand(["serve", "--demo", "--port", "0"], {
        DATABASE_URL: "postgres://postgres@127.0.0.1:1/production",
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("PostgreSQL database of DATABASE_URL");
      expect(result.stderr).toContain("--force-demo");
      expect(result.stderr).not.toContain("ECONNREFUSED");
      expect(result.stdout).toBe("");
    },
    SLOW,
  );

  it.skipIf(adminUrl === undefined)(
    "--force-demo loads the demo into PostgreSQL",
    async () => {
      if (adminUrl === undefined) return;
      const database = await createDatabase(adminUrl);
      try {
        const server = await startServer({
          env: { DATABASE_URL: database.url },
          args: ["--demo", "--force-demo"],
        });
        const listed = await call(server.base, "/api/v1/reports?pageSize=1", {
          key: DEMO_API_KEY,
        });
        expect(listed.status).toBe(200);
        expect((listed.body as { totalCount: number }).totalCount).toBeGreaterThan(0);
        await stopServer(server);
      } finally {
        await database.drop();
      }
    },
    SLOW,
  );

  it.skipIf(onPostgres)(
    "refuses a database holding other organizations, loads nothing; --force-demo overrides",
    async () => {
      const env = { DATA_DIR: join(dir, "production") };
      expect((await runCommand(["seed", seedFile], env)).code).toBe(0);
      const refused = await runCommand(["serve", "--demo", "--port", "0"], env);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("other organizations (acme, globex)");
      expect(refused.stderr).toContain("--force-demo");
      const orgs = await runCommand(["org", "list", "--json"], env);
      expect(JSON.parse(orgs.stdout).map((o: { id: string }) => o.id)).toEqual(["acme", "globex"]);

      const forced = await startServer({ env, args: ["--demo", "--force-demo"] });
      expect((await call(forced.base, "/api/v1/projects", { key: DEMO_API_KEY })).status).toBe(200);
      await stopServer(forced);
    },
    SLOW,
  );

  it.skipIf(onPostgres)(
    "loads the demo into its own embedded database again on every start (npm start)",
    async () => {
      const env = { DATA_DIR: join(dir, "demo") };
      for (let start = 0; start < 2; start++) {
        const server = await startServer({ env, args: ["--demo"] });
        const listed = await call(server.base, "/api/v1/reports?pageSize=1", {
          key: DEMO_API_KEY,
        });
        expect(listed.status).toBe(200);
        expect((listed.body as { totalCount: number }).totalCount).toBeGreaterThan(0);
        await stopServer(server);
      }
    },
    SLOW,
  );
});

describe("HOST and PORT", () => {
  it(
    "are used when no flag is given; --host and --port win",
    async () => {
      const env = { DATABASE_URL: "memory://", HOST: "127.0.0.2", PORT: "0" };
      const fromEnv = await startServer({ env, listenArgs: [] });
      expect(fromEnv.base).toMatch(/^http:\/\/127\.0\.0\.2:\d+$/);
      expect((await call(fromEnv.base, "/healthz")).status).toBe(200);
      await stopServer(fromEnv);
      const flags = await startServer({
        env: { ...env, PORT: "1" },
        listenArgs: ["--host", "127.0.0.1", "--port", "0"],
      });
      expect(flags.base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(flags.base).not.toMatch(/:1$/);
      await stopServer(flags);
    },
    SLOW,
  );
});
