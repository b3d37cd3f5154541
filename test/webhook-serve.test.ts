import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { SERVICE_ENTRY } from "./helpers/build-service.js";
import { onPostgres } from "./helpers/database.js";
import { eventually } from "./helpers/webhook-receiver.js";

/**
 * `npm start` runs `serve --demo`: it allows webhooks to reach a receiver on this machine
 * (WEBHOOK_ALLOW_INSECURE=true unless set) and says so; an explicit setting wins.
 */
const ROOT = new URL("..", import.meta.url).pathname;
const spawned: ChildProcess[] = [];
afterAll(() => {
  for (const child of spawned)
    if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, "SIGKILL");
});

const { WEBHOOK_ALLOW_INSECURE: _unset, ...inherited } = process.env;

async function demoBanner(env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, [SERVICE_ENTRY, "serve", "--demo", "--port", "0"], {
    cwd: ROOT,
    env: { ...inherited, DATABASE_URL: "memory://", LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  spawned.push(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  await eventually(() => out.includes("demo project API key"), "the demo banner", 120_000);
  const exited = new Promise((resolve) => child.once("close", resolve));
  child.kill("SIGTERM");
  expect(await exited).toBe(0);
  return out;
}

// The demo runs on in-memory PGlite whatever the suite's database: once is enough.
describe.skipIf(onPostgres)("serve --demo and webhooks", () => {
  it("allows insecure webhook targets and says so on stdout, unless WEBHOOK_ALLOW_INSECURE is set", async () => {
    const WARNING =
      "WEBHOOK_ALLOW_INSECURE=true: webhooks may target http:// URLs and private, loopback and link-local addresses (development only; never in production)\n";
    expect(await demoBanner({})).toContain(`(sign in with an API key)\n${WARNING}demo API key`);
    expect(await demoBanner({ WEBHOOK_ALLOW_INSECURE: "false" })).not.toContain(WARNING);
  }, 300_000);
});
