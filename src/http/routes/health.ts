import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { UnavailableError } from "../../domain/errors.js";
import { statusSchema } from "../../schemas/reference.js";
import type { Services } from "../../services/index.js";
import { errorResponses, probeErrors } from "../openapi-responses.js";

const ok = (description: string) =>
  statusSchema.meta({ description, examples: [{ status: "ok" }] });

const readinessSchema = statusSchema
  .extend({
    readReplica: z
      .object({
        status: z.enum(["in_use", "lagging", "unreachable"]).meta({
          description:
            "in_use: reads go to the replica; lagging (past READ_REPLICA_MAX_LAG_MS) or unreachable: to the primary",
        }),
        lagMs: z.number().int().nonnegative().meta({ format: "int64" }).nullable().meta({
          description: "How far the replica is behind the primary; null when unknown",
        }),
      })
      .optional()
      .meta({ description: "Only with a read replica (DATABASE_READ_URL)" }),
  })
  .meta({
    description: "Ready",
    examples: [{ status: "ok" }, { status: "ok", readReplica: { status: "in_use", lagMs: 0 } }],
  });

/** How long one readiness answer (a database ping) is reused: a flood costs one ping a second. */
const READINESS_CACHE_MS = 1_000;

export function healthRoutes(services: Services, draining: () => boolean = () => false) {
  const ready = reusedFor(READINESS_CACHE_MS, async () => {
    await services.ready();
    return services.readReplica();
  });
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
            "Readiness: 200 when the database answers (checked at most once a second), else 503; 503 too once the process is shutting down (a balancer takes it out before it stops). With a read replica, the body says whether reads go to it; the status stays 200 while the primary answers. No API key; limited per address.",
          response: { 200: readinessSchema, ...probeErrors, 503: errorResponses[503] },
        },
      },
      async () => {
        if (draining()) throw new UnavailableError("shutting down");
        let replica: Awaited<ReturnType<typeof ready>>;
        try {
          replica = await ready();
        } catch (error) {
          // Whatever keeps the database from answering (down, closed, pool ended), the probe's
          // answer is "not ready": a 503, never a 500.
          if (error instanceof UnavailableError) throw error;
          throw new UnavailableError("database not reachable", { cause: error });
        }
        return {
          status: "ok" as const,
          ...(replica === undefined ? {} : { readReplica: replica }),
        };
      },
    );
  };
}

/**
 * `check` at most once per `ms`: calls within that time (those that come while it runs, too)
 * share its outcome, success or failure.
 */
function reusedFor<T>(ms: number, check: () => Promise<T>): () => Promise<T> {
  let last: { at: number; outcome: Promise<T> } | undefined;
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
