import type { FastifyInstance } from "fastify";

/**
 * The idle timeout is for the client: it runs while the server waits on the client, and is
 * off while the request is worked on (a batch waiting on a lock or a slow statement must not
 * lose its connection; `DB_STATEMENT_TIMEOUT_MS` bounds that). It is armed again when the
 * answer starts, so a client that stops reading it is dropped after `ms` without progress.
 * Receiving the request is bounded by `REQUEST_TIMEOUT_MS`, a kept-alive connection between
 * requests by the keep-alive timeout.
 */
export function idleTimeoutWhileAnswering(app: FastifyInstance, ms: number): void {
  app.addHook("onRequest", async (request) => {
    request.raw.socket?.setTimeout?.(0);
  });
  app.addHook("onSend", async (request, _reply, payload) => {
    request.raw.socket?.setTimeout?.(ms);
    return payload;
  });
}
