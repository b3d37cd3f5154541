#!/usr/bin/env node
// Runs a command (the test suite) against PostgreSQL: TEST_DATABASE_URL, or the local server.
// The suite creates a fresh database per test file on that server, so the role needs CREATEDB.
import { spawn } from "node:child_process";
import pg from "pg";

const url = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
try {
  await client.connect();
  await client.query("select 1");
} catch (error) {
  console.error(
    `PostgreSQL is not reachable at ${url.replace(/:[^:@/]*@/, ":***@")}: ${error.message}`,
  );
  console.error("Start it (pg_ctlcluster 15 main start) or set TEST_DATABASE_URL.");
  process.exit(1);
} finally {
  await client.end().catch(() => {});
}

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, {
  stdio: "inherit",
  env: { ...process.env, TEST_DATABASE_URL: url },
  shell: process.platform === "win32",
});
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
