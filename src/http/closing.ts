import type { FastifyInstance } from "fastify";
import { UnavailableError } from "../domain/errors.js";

/** Once draining, each answer closes its connection: keep-alive clients move to other nodes. */
export function closeConnectionsWhileDraining(
  app: FastifyInstance,
  draining?: () => boolean,
): void {
  if (draining === undefined) return;
  app.addHook("onSend", async (_request, reply, payload) => {
    if (draining()) reply.header("connection", "close");
    return payload;
  });
}

/**
 * Once `close()` has begun, a request still arriving on an open keep-alive connection (a
 * pipelined one, or one sent as the server stopped accepting) is answered 503 with
 * `Retry-After` and `Connection: close`, in the API's shape, before any limit counts it.
 */
export function refuseWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onRequest", async () => {
    if (closing) throw new UnavailableError("shutting down");
  });
}
