import type { FastifyInstance, FastifyReply } from "fastify";
import { AUTHENTICATION_FAILURES, hashApiKey, keyFromAuthorization } from "../../domain/api-key.js";
import type { Caller } from "../../domain/caller.js";
import { AuthenticationError } from "../../domain/errors.js";
import { errorBody } from "../errors.js";
import { headerCount } from "../repeated-headers.js";
import { addressBucket } from "./client-address.js";
import { isHealthProbe } from "./in-flight.js";
import { localCounters, type RateCounter, type RateCounters } from "./rate-counters.js";

const MINUTE = 60_000;

/**
 * Before anything else (routing aside): every request counts against its client address's
 * budget. The health probes have a budget of their own, so that a flood of API requests cannot
 * get a prober refused and a flood of probes costs little (readiness is cached, see health.ts).
 * Entries are keyed by the client address (the connection's, or the one a trusted proxy
 * forwarded, see TRUST_PROXY). With a shared store (`counters`) the API budget is the whole
 * cluster's; probes are always counted per process: each node answers its own balancer checks.
 */
export function limitRequestsPerAddress(
  app: FastifyInstance,
  limits: { perMinute: number; healthProbesPerMinute: number; counters?: RateCounters },
): void {
  const perAddress = (limits.counters ?? localCounters)("address", limits.perMinute, MINUTE);
  const probesPerAddress = localCounters("probes", limits.healthProbesPerMinute, MINUTE);
  app.addHook("onRequest", async (request, reply) => {
    const probe = isHealthProbe(request);
    const hit = await (probe ? probesPerAddress : perAddress).hit(addressBucket(request.ip));
    if (!hit.allowed)
      return tooMany(
        reply,
        hit.retryInMs,
        probe
          ? `Rate limit exceeded: ${limits.healthProbesPerMinute} health probes per minute from one address`
          : `Rate limit exceeded: ${limits.perMinute} requests per minute from one address`,
      );
  });
}

export type AuthenticationLimits = {
  authenticate: (authorization: string | undefined) => Promise<Caller>;
  perKeyPerMinute: number;
  /** Failed authentications per address: one budget with the dashboard's sign-in. */
  failures: RateCounter;
  /** Where requests are counted: in this process (default) or in a store shared by all. */
  counters?: RateCounters;
};

/**
 * The budget of failed authentications per client address (AUTH_FAILURES_PER_MINUTE), one
 * for the API and the dashboard's sign-in: a guesser gets it once, whichever door it tries.
 */
export function authFailureCounter(counters: RateCounters, perMinute: number): RateCounter {
  return counters("auth-failures", perMinute, MINUTE);
}

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
  const counters = limits.counters ?? localCounters;
  const failures = limits.failures;
  const perKey = counters("key", limits.perKeyPerMinute, MINUTE);
  // Hashes of keys that authenticated: filled only after a successful lookup, so its size is
  // bounded by the stored keys (and capped); a key leaves it when a lookup refuses it.
  const known = new Set<string>();
  api.addHook("onRequest", async (request, reply) => {
    // Costs no lookup, as a missing key: not counted against the address.
    if (headerCount(request, "authorization") > 1)
      throw new AuthenticationError(AUTHENTICATION_FAILURES.repeated);
    const address = addressBucket(request.ip);
    const key = keyFromAuthorization(request.headers.authorization);
    const hash = key === undefined ? undefined : hashApiKey(key);
    // A key that authenticated before is never blocked: no need to look its address up.
    const spared = hash !== undefined && known.has(hash);
    const blockedFor = spared ? undefined : await failures.exhaustedFor(address);
    if (blockedFor !== undefined) {
      return tooMany(
        reply,
        blockedFor,
        `Too many failed authentications: ${failures.limit} per minute from one address`,
      );
    }
    try {
      request.caller = await limits.authenticate(request.headers.authorization);
    } catch (error) {
      // Only failures that cost a lookup count (a missing key costs nothing).
      // A key that authenticated before and fails now (revoked) is no longer spared the block.
      if (error instanceof AuthenticationError && hash !== undefined) {
        known.delete(hash);
        await failures.hit(address);
      }
      throw error;
    }
    if (hash !== undefined && known.size < 100_000) known.add(hash);
    const budget = request.caller.apiKeyId ?? `organization:${request.caller.organizationId}`;
    const hit = await perKey.hit(budget);
    reply.header("x-ratelimit-limit", String(limits.perKeyPerMinute));
    reply.header("x-ratelimit-remaining", String(hit.remaining));
    reply.header("x-ratelimit-reset", String(Math.ceil(hit.retryInMs / 1000)));
    if (!hit.allowed)
      return tooMany(
        reply,
        hit.retryInMs,
        `Rate limit exceeded: ${limits.perKeyPerMinute} requests per minute`,
      );
  });
}

function tooMany(reply: FastifyReply, retryInMs: number, what: string) {
  const seconds = Math.max(1, Math.ceil(retryInMs / 1000));
  reply.header("retry-after", String(seconds));
  return reply.code(429).send(errorBody(429, `${what}; retry in ${seconds} seconds`));
}
