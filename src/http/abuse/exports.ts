import type { FastifyInstance, FastifyRequest } from "fastify";
import { errorBody } from "../errors.js";
import { prefersCsv } from "../negotiate.js";

const EXPORT_RETRY_AFTER_SECONDS = 5;

/**
 * At most `max` CSV exports (`GET /api/v1/reports` with `Accept: text/csv`) streaming at once
 * per API key. An export holds its slot until its connection has taken the last byte or is
 * closed, so a client that never reads its export (ended by the idle timeout) can hold only
 * its own key's slots, never the shared in-flight pool. Register inside the authenticated
 * scope, after the authentication hook.
 */
export function limitExportsPerKey(
  app: FastifyInstance,
  max: number,
  isExport: (request: FastifyRequest) => boolean = isApiExport,
): void {
  const running = new Map<string, number>();
  app.addHook("preHandler", async (request, reply) => {
    if (!isExport(request)) return;
    const key = request.caller.apiKeyId ?? request.caller.organizationId;
    const count = running.get(key) ?? 0;
    if (count >= max) {
      reply.header("retry-after", String(EXPORT_RETRY_AFTER_SECONDS));
      return reply
        .code(429)
        .send(
          errorBody(
            429,
            `Too many concurrent exports: at most ${max} per API key; retry when one has finished`,
          ),
        );
    }
    running.set(key, count + 1);
    reply.raw.once("close", () => {
      const left = (running.get(key) ?? 1) - 1;
      if (left <= 0) running.delete(key);
      else running.set(key, left);
    });
  });
}

function isApiExport(request: FastifyRequest): boolean {
  return (
    request.method === "GET" &&
    request.routeOptions.url === "/api/v1/reports" &&
    prefersCsv(request.headers.accept)
  );
}
