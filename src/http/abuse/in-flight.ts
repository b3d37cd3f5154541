import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { errorBody, overloadedRetryAfter } from "../errors.js";

const HEALTH = new Set(["/healthz", "/readyz"]);

/** True for the operational probes: never shed, and limited apart (see rate-limits.ts). */
export function isHealthProbe(request: FastifyRequest): boolean {
  return HEALTH.has(request.url.split("?")[0] ?? "");
}

const admitted = Symbol("admitted");
type Admitted = { [admitted]?: boolean };

/**
 * Bounded concurrency: past `max` requests being worked on, answer 503 at once rather than
 * queue work (and database connections) without limit.
 *
 * A request takes its slot in `preHandler`: after its body has arrived and after
 * authentication, so a client that sends slowly (or not at all) holds no slot. It gives the
 * slot back when its handler's work is over, that is when its answer is sent (`onSend`;
 * `onResponse` and `onError` release too, idempotently, should one path skip `onSend`). Not
 * when the connection closes: a client that hangs up after sending its body would free the
 * slot while its handler and its database work go on. What is left after `onSend` is the
 * client reading, which the idle timeout bounds and which costs no database work (a CSV
 * export holds an export slot of its key instead, see exports.ts).
 */
export function shedLoadAbove(app: FastifyInstance, max: number): void {
  let inFlight = 0;
  const release = (reply: FastifyReply) => {
    const admittedReply = reply as FastifyReply & Admitted;
    if (admittedReply[admitted]) {
      admittedReply[admitted] = false;
      inFlight--;
    }
  };
  app.addHook("preHandler", async (request, reply) => {
    if (isHealthProbe(request)) return;
    if (inFlight >= max) {
      reply.header("retry-after", String(overloadedRetryAfter));
      return reply.code(503).send(errorBody(503, "Server overloaded; retry shortly"));
    }
    inFlight++;
    (reply as FastifyReply & Admitted)[admitted] = true;
    request.log.trace({ inFlight }, "request admitted");
  });
  app.addHook("onSend", async (_request, reply, payload) => {
    release(reply);
    return payload;
  });
  app.addHook("onError", async (_request, reply) => release(reply));
  app.addHook("onResponse", async (_request, reply) => release(reply));
}
