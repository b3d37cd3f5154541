import type { FastifyInstance, FastifyReply } from "fastify";
import { hashApiKey, keyFromAuthorization } from "../../domain/api-key.js";
import type { Caller } from "../../domain/caller.js";
import { AuthenticationError } from "../../domain/errors.js";
import { errorBody } from "../errors.js";
import { addressBucket } from "./client-address.js";
import { isHealthProbe } from "./in-flight.js";
import { WindowCounter } from "./window-counter.js";

const MINUTE = 60_000;

/**
 * Before anything else (routing aside): every request counts against its client address's
 * budget. The health probes have a budget of their own, so that a flood of API requests cannot
 * get a prober refused and a flood of probes costs little (readiness is cached, see health.ts).
 * Entries are keyed by the address the connection comes from, never by a header.
 */
export function limitRequestsPerAddress(
  app: FastifyInstance,
  limits: { perMinute: number; healthProbesPerMinute: number },
): void {
  const perAddress = new WindowCounter(limits.perMinute, MINUTE);
  const probesPerAddress = new WindowCounter(limits.healthProbesPerMinute, MINUTE);
  app.addHook("onRequest", async (request, reply) => {
    const probe = isHealthProbe(request);
    const now = Date.now();
    const hit = (probe ? probesPerAddress : perAddress).hit(addressBucket(request.ip), now);
    if (!hit.allowed)
      return tooMany(
        reply,
        hit.resetAt - now,
        probe
          ? `Rate limit exceeded: ${limits.healthProbesPerMinute} health probes per minute from one address`
          : `Rate limit exceeded: ${limits.perMinute} requests per minute from one address`,
      );
  });
}

export type AuthenticationLimits = {
  authenticate: (authorization: string | undefined) => Promise<Caller>;
  perKeyPerMinute: number;
  failuresPerMinute: number;
};

/**
 * The authentication hook of the API scope, with its two limits:
 * - failed authentications (a key that is unknown or revoked) per client address: once an
 *   address is over its budget, its requests are refused with 429 before any database lookup,
 *   except those carrying a key that authenticated before (so the other tenants behind a
 *   shared address keep working);
 * - requests per stored API key (its id), counted only after the key authenticated: a random
 *   `Authorization` value creates no entry, so it can neither get a budget of its own nor push
 *   another key's entry out.
 */
export function authenticateWithLimits(api: FastifyInstance, limits: AuthenticationLimits): void {
  const failures = new WindowCounter(limits.failuresPerMinute, MINUTE);
  const perKey = new WindowCounter(limits.perKeyPerMinute, MINUTE);
  // Hashes of keys that authenticated: filled only after a successful lookup, so its size is
  // bounded by the stored keys (and capped); a key leaves it when a lookup refuses it.
  const known = new Set<string>();
  api.addHook("onRequest", async (request, reply) => {
    const now = Date.now();
    const address = addressBucket(request.ip);
    const key = keyFromAuthorization(request.headers.authorization);
    const hash = key === undefined ? undefined : hashApiKey(key);
    const blockedUntil = failures.exhaustedUntil(address, now);
    if (blockedUntil !== undefined && (hash === undefined || !known.has(hash))) {
      return tooMany(
        reply,
        blockedUntil - now,
        `Too many failed authentications: ${limits.failuresPerMinute} per minute from one address`,
      );
    }
    try {
      request.caller = await limits.authenticate(request.headers.authorization);
    } catch (error) {
      // Only failures that cost a lookup count (a missing key costs nothing).
      // A key that authenticated before and fails now (revoked) is no longer spared the block.
      if (error instanceof AuthenticationError && hash !== undefined) {
        known.delete(hash);
        failures.hit(address, now);
      }
      throw error;
    }
    if (hash !== undefined && known.size < 100_000) known.add(hash);
    const budget = request.caller.apiKeyId ?? `organization:${request.caller.organizationId}`;
    // Read again after the lookup: a concurrent request of the key may have opened its window
    // meanwhile, and the reset must not come out past the window's end (61 s).
    const counted = Date.now();
    const hit = perKey.hit(budget, counted);
    reply.header("x-ratelimit-limit", String(limits.perKeyPerMinute));
    reply.header("x-ratelimit-remaining", String(hit.remaining));
    reply.header("x-ratelimit-reset", String(Math.ceil((hit.resetAt - counted) / 1000)));
    if (!hit.allowed)
      return tooMany(
        reply,
        hit.resetAt - counted,
        `Rate limit exceeded: ${limits.perKeyPerMinute} requests per minute`,
      );
  });
}

function tooMany(reply: FastifyReply, retryInMs: number, what: string) {
  const seconds = Math.max(1, Math.ceil(retryInMs / 1000));
  reply.header("retry-after", String(seconds));
  return reply.code(429).send(errorBody(429, `${what}; retry in ${seconds} seconds`));
}
