import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { run } from "../../src/cli/program.js";
import type { DatabaseConfig } from "../../src/config.js";
import type { Fixture } from "../../src/schemas/fixture.js";
import { freshDatabase, onPostgres } from "./database.js";

/** Runs the `trading-reports` command in-process with `env`; returns its exit code and output. */
export async function runCli(env: Record<string, string>, argv: string[]) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (d) => {
    out += d;
  });
  stderr.on("data", (d) => {
    err += d;
  });
  const code = await run(argv, { stdout, stderr, env });
  return { code, out, err };
}

export type CliDatabase = Awaited<ReturnType<typeof cliDatabase>>;

/**
 * A database of the test file's own for CLI tests, with a temp dir for files: a fresh
 * PostgreSQL database when the suite runs on PostgreSQL, else an embedded PGlite `DATA_DIR`
 * in that dir. Only the connection's settings are kept: the CLI opens the database itself.
 */
export async function cliDatabase(prefix: string, options: { migrated?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let config: DatabaseConfig = { kind: "pglite", dataDir: join(dir, "data") };
  let env: Record<string, string> = { DATA_DIR: join(dir, "data"), LOG_LEVEL: "silent" };
  let dropDatabase: () => Promise<void> = async () => {};
  if (onPostgres) {
    const database = await freshDatabase(options);
    if (database.config.kind !== "postgres") throw new Error("expected PostgreSQL");
    config = database.config;
    env = { DATABASE_URL: database.config.url, LOG_LEVEL: "silent" };
    dropDatabase = () => database.close();
    await database.db.destroy().catch(() => {});
  }
  const cli = (...argv: string[]) => runCli(env, argv);
  return {
    dir,
    config,
    env,
    cli,
    /** Writes `fixture` to `fixture.json` in the dir and runs `seed` on it. */
    seed(fixture: Fixture) {
      const file = join(dir, "fixture.json");
      writeFileSync(file, JSON.stringify(fixture));
      return cli("seed", file);
    },
    async close() {
      await dropDatabase().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
