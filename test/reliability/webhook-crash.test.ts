import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baseFixture, KEYS } from "../helpers/fixture.js";
import { eventually, type Receiver, startReceiver, verified } from "../helpers/webhook-receiver.js";
import {
  call,
  databaseBackends,
  killHard,
  runCommand,
  startServer,
  stopAllServers,
  stopServer,
  writeSeed,
} from "./support.js";

/**
 * CONTRACT section 7, "a crash or restart loses no pending delivery": a real `serve` process is
 * killed with SIGKILL while its attempt waits on the receiver (the event committed, not
 * delivered); the restarted process delivers it, with the same webhook-id. The endpoint is
 * created with the CLI while the server runs (on PGlite, sent to it over its control socket).
 */
const backends = databaseBackends("tr-hook-crash-");

let dir: string;
let receiver: Receiver;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "tr-hook-crash-seed-"));
  receiver = await startReceiver();
});
afterAll(async () => {
  await stopAllServers();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`webhooks across kill -9 (${backend.name})`, () => {
    it("delivers an event whose attempt was cut by kill -9 after the restart, same webhook-id", async () => {
      const seedFile = writeSeed(dir, baseFixture());
      const { env: dbEnv, tearDown } = await backend.setUp();
      const path = `/crash-${backend.name.replace(/\W+/g, "-")}`;
      const env = {
        ...dbEnv,
        WEBHOOK_ALLOW_INSECURE: "true",
        WEBHOOK_TIMEOUT_MS: "2000",
        WEBHOOK_RETRY_SCHEDULE: "1,1,1",
      };
      try {
        const first = await startServer({ seedFile, env });
        const created = await runCommand(
          ["webhook", "create", "acme", receiver.url(path), "--json"],
          env,
        );
        expect(created.code, created.stderr).toBe(0);
        const hook = JSON.parse(created.stdout) as { id: string; secret: string };
        receiver.hang(path);
        const test = await call(first.base, `/api/v1/webhooks/${hook.id}/test`, {
          method: "POST",
          key: KEYS.acme,
        });
        expect(test.status).toBe(202);
        await eventually(() => receiver.at(path).length === 1, "the first attempt");
        await killHard(first);
        receiver.hang(path, false);

        const second = await startServer({ env });
        const [cut, delivered] = await eventually(
          () => receiver.at(path).length >= 2 && receiver.at(path),
          "the attempt after the restart",
          60_000,
        );
        expect(delivered?.headers["webhook-id"]).toBe(cut?.headers["webhook-id"]);
        expect(delivered && verified(hook.secret, delivered)).toMatchObject({
          type: "webhook.test",
          data: { webhookId: hook.id },
        });
        const log = await eventually(async () => {
          const reply = await call(second.base, `/api/v1/webhooks/${hook.id}/deliveries`, {
            key: KEYS.acme,
          });
          const items = (reply.body as { items: { status: string; attempts: number }[] }).items;
          return items[0]?.status === "succeeded" && items;
        }, "the log to show the delivery");
        expect(log).toHaveLength(1);
        await stopServer(second);
      } finally {
        await stopAllServers();
        await tearDown();
      }
    }, 180_000);
  });
}
