import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { UnavailableError } from "../../domain/errors.js";
import { statusSchema } from "../../schemas/reference.js";
import type { Services } from "../../services/index.js";
import { errorResponses, probeErrors } from "../openapi-responses.js";

const ok = (description: string) =>
  statusSchema.meta({ description, examples: [{ status: "ok" }] });

/** How long one readiness answer (a database ping) is reused: a flood costs one ping a second. */
const READINESS_CACHE_MS = 1_000;

export function healthRoutes(services: Services, draining: () => boolean = () => false) {
  const ready = reusedFor(READINESS_CACHE_MS, services.ready);
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const operations = { tags: ["operations"], security: [] };
    app.get(
      "/healthz",
      {
        schema: {
          ...operations,
          operationId: "getHealth",
          summary: "Process is up",
          description: "Liveness: 200 while the process runs. No API key; limited per address.",
          response: { 200: ok("Up"), ...probeErrors },
        },
      },
      async () => ({ status: "ok" as const }),
    );
    app.get(
      "/readyz",
      {
        schema: {
          ...operations,
          operationId: "getReadiness",
          summary: "Database reachable",
          description:
            "Readiness: 200 when the database answers (checked at most once a second), else 503; 503 too once the process is shutting down (a balancer takes it out before it stops). No API key; limited per address.",
          response: { 200: ok("Ready"), ...probeErrors, 503: errorResponses[503] },
        },
      },
      async () => {
        if (draining()) throw new UnavailableError("shutting down");
        try {
          await ready();
        } catch (error) {
          // Whatever keeps the database from answering (down, closed, pool ended), the probe's
          // answer is "not ready": a 503, never a 500.
          if (error instanceof UnavailableError) throw error;
          throw new UnavailableError("database not reachable", { cause: error });
        }
        return { status: "ok" as const };
      },
    );
  };
}

/**
 * `check` at most once per `ms`: calls within that time (those that come while it runs, too)
 * share its outcome, success or failure.
 */
function reusedFor(ms: number, check: () => Promise<void>): () => Promise<void> {
  let last: { at: number; outcome: Promise<void> } | undefined;
  return () => {
    const now = Date.now();
    if (last === undefined || now - last.at >= ms) {
      const outcome = check();
      outcome.catch(() => {}); // awaited by the callers; never an unhandled rejection here
      last = { at: now, outcome };
    }
    return last.outcome;
  };
}
