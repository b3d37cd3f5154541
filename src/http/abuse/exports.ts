import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { errorBody } from "../errors.js";
import { prefersCsv } from "../negotiate.js";

const EXPORT_RETRY_AFTER_SECONDS = 5;

/**
 * The CSV exports streaming at once, per API key: at most `max`, counted across the API
 * (`GET /api/v1/reports` with `Accept: text/csv`) and the dashboard's download, which share
 * one set of slots (MAX_EXPORTS_PER_KEY).
 */
export type ExportSlots = {
  readonly max: number;
  /** Takes one of `key`'s slots, or returns false when all are taken. */
  take(key: string): boolean;
  release(key: string): void;
};

export function exportSlots(max: number): ExportSlots {
  const running = new Map<string, number>();
  return {
    max,
    take(key) {
      const count = running.get(key) ?? 0;
      if (count >= max) return false;
      running.set(key, count + 1);
      return true;
    },
    release(key) {
      const left = (running.get(key) ?? 1) - 1;
      if (left <= 0) running.delete(key);
      else running.set(key, left);
    },
  };
}

/** How a refused export is answered: the API's JSON by default. */
type Refusal = (request: FastifyRequest, reply: FastifyReply, message: string) => unknown;

const refuseInJson: Refusal = (_request, reply, message) =>
  reply.code(429).send(errorBody(429, message));

/**
 * Holds an export to its key's slots. An export keeps its slot until its connection has taken
 * the last byte or is closed, so a client that never reads its export (ended by the idle
 * timeout) can hold only its own key's slots, never the shared in-flight pool. Register inside
 * the authenticated scope, after the authentication hook.
 */
export function limitExportsPerKey(
  app: FastifyInstance,
  slots: ExportSlots,
  isExport: (request: FastifyRequest) => boolean = isApiExport,
  refuse: Refusal = refuseInJson,
): void {
  app.addHook("preHandler", async (request, reply) => {
    if (!isExport(request)) return;
    const key = request.caller.apiKeyId ?? request.caller.organizationId;
    if (!slots.take(key)) {
      reply.header("retry-after", String(EXPORT_RETRY_AFTER_SECONDS));
      return refuse(
        request,
        reply,
        `Too many concurrent exports: at most ${slots.max} per API key; retry when one has finished`,
      );
    }
    reply.raw.once("close", () => slots.release(key));
  });
}

function isApiExport(request: FastifyRequest): boolean {
  return (
    request.method === "GET" &&
    request.routeOptions.url === "/api/v1/reports" &&
    prefersCsv(request.headers.accept)
  );
}
