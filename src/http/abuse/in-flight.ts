import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { errorBody, overloadedRetryAfter } from "../errors.js";

const HEALTH = new Set(["/healthz", "/readyz"]);

/** True for the operational probes, which are never shed nor rate-limited. */
export function isHealthProbe(request: FastifyRequest): boolean {
  return HEALTH.has(request.url.split("?")[0] ?? "");
}

const admitted = Symbol("admitted");
type Admitted = { [admitted]?: () => void };

/**
 * Bounded concurrency: past `max` requests being worked on, answer 503 at once rather than
 * queue work (and database connections) without limit.
 *
 * A request takes its slot in `preHandler`: after its body has arrived and after
 * authentication, so a client that sends slowly (or not at all) holds no slot. It gives the
 * slot back when its answer starts (`onSend`), or when the connection closes first: what is
 * left then is the client reading, which the idle timeout bounds and which costs no database
 * work (a CSV export holds an export slot of its key instead, see exports.ts).
 */
export function shedLoadAbove(app: FastifyInstance, max: number): void {
  let inFlight = 0;
  app.addHook("preHandler", async (request, reply) => {
    if (isHealthProbe(request)) return;
    if (inFlight >= max) {
      reply.header("retry-after", String(overloadedRetryAfter));
      return reply.code(503).send(errorBody(503, "Server overloaded; retry shortly"));
    }
    inFlight++;
    let held = true;
    const release = () => {
      if (held) {
        held = false;
        inFlight--;
      }
    };
    (reply as FastifyReply & Admitted)[admitted] = release;
    reply.raw.once("close", release);
    request.log.trace({ inFlight }, "request admitted");
  });
  app.addHook("onSend", async (_request, reply, payload) => {
    (reply as FastifyReply & Admitted)[admitted]?.();
    return payload;
  });
}
