/**
 * Receive trading-reports webhooks: verify each delivery's signature with the Standard
 * Webhooks library (`npm install standardwebhooks`) and print the event, one line each:
 *
 *   WEBHOOK_SECRET=whsec_… PORT=3000 npx tsx examples/webhook-receiver.ts
 *
 * Then subscribe its address (behind https in production; `http://127.0.0.1:3000` needs
 * WEBHOOK_ALLOW_INSECURE=true on the service, as `npm start` sets). A delivery whose
 * signature or timestamp does not check is answered 400 and not printed; a verified one 204.
 * Deliveries are made at least once: a repeated webhook-id (a retry whose first answer was
 * lost) is answered 204 again but printed once. The webhook-ids seen are kept in memory here,
 * so they are lost on a restart and grow without end; the service retries one delivery with
 * the same webhook-id for about 28 hours, so a real receiver keeps the ids it has handled in
 * its database (for at least that long), in the transaction that acts on the event.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

const secret = process.env.WEBHOOK_SECRET;
if (!secret?.startsWith("whsec_")) {
  console.error("set WEBHOOK_SECRET to the webhook's secret (whsec_…)");
  process.exit(2);
}
const webhook = new Webhook(secret);
const seen = new Set<string>(); // In memory for the example: a real receiver uses its database.

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    const headers = {
      "webhook-id": String(request.headers["webhook-id"] ?? ""),
      "webhook-timestamp": String(request.headers["webhook-timestamp"] ?? ""),
      "webhook-signature": String(request.headers["webhook-signature"] ?? ""),
    };
    let event: { type: string; timestamp: string; data: unknown };
    try {
      event = webhook.verify(body, headers) as typeof event;
    } catch (error) {
      console.error(`refused ${headers["webhook-id"] || "a request"}: ${(error as Error).message}`);
      response.writeHead(400).end();
      return;
    }
    if (!seen.has(headers["webhook-id"])) {
      seen.add(headers["webhook-id"]);
      console.log(`${event.timestamp} ${event.type} ${JSON.stringify(event.data)}`);
    }
    response.writeHead(204).end();
  });
});

server.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? "127.0.0.1", () => {
  const { address, port } = server.address() as AddressInfo;
  console.log(`listening on http://${address}:${port}`);
});
process.on("SIGTERM", () => server.close());
