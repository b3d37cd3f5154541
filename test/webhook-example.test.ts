import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebhookDeliveries, type WebhookJob } from "../src/jobs/webhook-deliveries.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS } from "./helpers/fixture.js";
import { eventually } from "./helpers/webhook-receiver.js";

/**
 * examples/webhook-receiver.ts, run as a subscriber would run it: it verifies deliveries with
 * the standardwebhooks package, prints each event once, and refuses a forged one.
 */
const ROOT = new URL("../", import.meta.url).pathname;
let t: TestApp;
let job: WebhookJob;
let child: ChildProcess | undefined;
let stdout = "";
let stderr = "";

beforeAll(async () => {
  t = await startTestApp({ env: { WEBHOOK_ALLOW_INSECURE: "true" } });
  job = startWebhookDeliveries(t.database.stores, {
    allowInsecure: true,
    timeoutMs: 5_000,
    retrySchedule: [1, 1],
    concurrency: 2,
    pollMs: 50,
  });
});
afterAll(async () => {
  if (child?.pid !== undefined && child.exitCode === null) process.kill(child.pid, "SIGKILL");
  await job?.stop();
  await t?.close();
});

describe("examples/webhook-receiver.ts", () => {
  it("prints a verified webhook.test and refuses a forged delivery", async () => {
    const created = await t.request({
      method: "POST",
      url: "/api/v1/webhooks",
      key: KEYS.acme,
      payload: { url: "http://127.0.0.1:9/", events: ["*"] },
    });
    const { id, secret } = created.json() as { id: string; secret: string };
    child = spawn(process.execPath, ["--import", "tsx", "examples/webhook-receiver.ts"], {
      cwd: ROOT,
      env: { ...process.env, WEBHOOK_SECRET: secret, PORT: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const base = await eventually(
      () => /^listening on (http:\/\/\S+)$/m.exec(stdout)?.[1],
      "the receiver's listening line",
      60_000,
    );
    const patched = await t.request({
      method: "PATCH",
      url: `/api/v1/webhooks/${id}`,
      key: KEYS.acme,
      payload: { url: `${base}/hooks` },
    });
    expect(patched.statusCode).toBe(200);
    await t.request({ method: "POST", url: `/api/v1/webhooks/${id}/test`, key: KEYS.acme });
    const line = await eventually(
      () => stdout.split("\n").find((l) => l.includes(" webhook.test ")),
      "the printed event",
    );
    expect(line).toMatch(
      new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\S+ webhook\\.test \\{"webhookId":"${id}"\\}$`),
    );

    const forged = await fetch(`${base}/hooks`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": "msg_forged",
        "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
        "webhook-signature": "v1,Zm9yZ2Vk",
      },
      body: JSON.stringify({ type: "kpi.missed", timestamp: "x", data: {} }),
    });
    expect(forged.status).toBe(400);
    await eventually(() => stderr.includes("refused msg_forged"), "the refusal");
    expect(stdout).not.toContain("kpi.missed");

    // A repeated webhook-id (a retry whose first answer was lost) is answered as the example's
    // comment says, and printed once.
    const comment = readFileSync(`${ROOT}examples/webhook-receiver.ts`, "utf8");
    const promised = /repeated webhook-id[^.]*answered (\d{3}) again/.exec(comment)?.[1];
    expect(comment).toMatch(/in memory[^.]*database/);
    const body = JSON.stringify({ type: "report.missing", timestamp: "t", data: { n: 1 } });
    const sent = new Date();
    const signature = new Webhook(secret).sign("msg_twice", sent, body);
    const headers = {
      "content-type": "application/json",
      "webhook-id": "msg_twice",
      "webhook-timestamp": String(Math.floor(sent.getTime() / 1000)),
      "webhook-signature": signature,
    };
    for (let i = 0; i < 2; i++) {
      const answer = await fetch(`${base}/hooks`, { method: "POST", headers, body });
      expect(String(answer.status)).toBe(promised);
    }
    await eventually(() => stdout.includes(" report.missing "), "the repeated event");
    expect(stdout.split(" report.missing ")).toHaveLength(2);
  }, 90_000);
});
