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
const MAX_KNOWN_KEYS = 100_000;

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
  /** Failed authentications per address: one budget with the dashboard's sign-in. */
  failures: AuthFailureBudget;
  /** Requests per stored API key: one budget with the dashboard's pages. */
  perKey: RateCounter;
};

/**
 * The budget of failed authentications per client address (AUTH_FAILURES_PER_MINUTE), one
 * for the API and the dashboard's sign-in: a guesser gets it once, whichever door it tries.
 * A lookup counts as a failure from the moment it starts until it has ended (then it is one,
 * or nothing), so that a burst of guesses sent at once gets no more lookups than guesses sent
 * one after another. Lookups of one key at once count once: a client's first requests with a
 * good key, sent together, are not refused. A key that authenticated before, through either
 * door, is never refused for its address's failures (so that the other tenants behind a shared
 * address keep working and signing in); it is spared until a lookup refuses it. Lookups in
 * flight are counted per process, failures where `counters` keep them.
 */
export function authFailureBudget(counters: RateCounters, perMinute: number): AuthFailureBudget {
  const failures = counters("auth-failures", perMinute, MINUTE);
  // Per address: the keys (hashes) being looked up, and how many lookups of each.
  const running = new Map<string, Map<string, number>>();
  const enter = (address: string, key: string): number => {
    const keys = running.get(address) ?? new Map<string, number>();
    running.set(address, keys);
    const others = keys.size - (keys.has(key) ? 1 : 0);
    keys.set(key, (keys.get(key) ?? 0) + 1);
    return others;
  };
  const leave = (address: string, key: string): void => {
    const keys = running.get(address);
    const left = (keys?.get(key) ?? 1) - 1;
    if (left > 0) keys?.set(key, left);
    else keys?.delete(key);
    if (keys?.size === 0) running.delete(address);
  };
  // Hashes of keys that authenticated: filled only after a successful lookup, so its size is
  // bounded by the stored keys; capped all the same, the first known leaving first.
  const known = new Set<string>();
  // Every authenticated request passes here: a known key costs one lookup, nothing more.
  const remember = (key: string) => {
    if (known.has(key)) return;
    known.add(key);
    if (known.size > MAX_KNOWN_KEYS) known.delete(known.values().next().value as string);
  };
  return {
    limit: perMinute,
    async attempt(address, key, lookup) {
      // Entered before the first await: requests arriving meanwhile see this one.
      const ahead = key === undefined ? 0 : enter(address, key);
      try {
        if (key === undefined || !known.has(key)) {
          const blockedForMs = await failures.exhaustedFor(address, ahead);
          if (blockedForMs !== undefined) return { blockedForMs };
        }
        try {
          const value = await lookup();
          if (key !== undefined) remember(key);
          return { value };
        } catch (error) {
          if (key !== undefined && error instanceof AuthenticationError) {
            known.delete(key);
            await failures.hit(address);
          }
          throw error;
        }
      } finally {
        if (key !== undefined) leave(address, key);
      }
    },
  };
}

export type AuthFailureBudget = {
  readonly limit: number;
  /**
   * Runs `lookup` of `key` (its hash; none: a missing key, which costs no lookup) sent from
   * `address`, unless the address's budget is used up and the key has not authenticated
   * before. A key's lookup holds a share of the budget while it runs, and fails it when it
   * throws an AuthenticationError.
   */
  attempt<T>(
    address: string,
    key: string | undefined,
    lookup: () => Promise<T>,
  ): Promise<{ value: T } | { blockedForMs: number }>;
};

/** The budget a caller's requests are counted against: its key's, else its organization's. */
export const requestBudgetOf = (caller: Caller): string =>
  caller.apiKeyId ?? `organization:${caller.organizationId}`;

/**
 * The authentication hook of the API scope, with its two limits:
 * - failed authentications (a key that is unknown or revoked) per client address: once an
 *   address is over its budget, its requests are refused with 429 before any database lookup,
 *   except those carrying a key that authenticated before (see authFailureBudget);
 * - requests per stored API key (its id), counted only after the key authenticated: a random
 *   `Authorization` value creates no entry, so it can neither get a budget of its own nor push
 *   another key's entry out.
 */
export function authenticateWithLimits(api: FastifyInstance, limits: AuthenticationLimits): void {
  const { failures, perKey } = limits;
  api.addHook("onRequest", async (request, reply) => {
    // Costs no lookup, as a missing key: not counted against the address.
    if (headerCount(request, "authorization") > 1)
      throw new AuthenticationError(AUTHENTICATION_FAILURES.repeated);
    const key = keyFromAuthorization(request.headers.authorization);
    const attempt = await failures.attempt(
      addressBucket(request.ip),
      key === undefined ? undefined : hashApiKey(key),
      () => limits.authenticate(request.headers.authorization),
    );
    if ("blockedForMs" in attempt) {
      return tooMany(
        reply,
        attempt.blockedForMs,
        `Too many failed authentications: ${failures.limit} per minute from one address`,
      );
    }
    request.caller = attempt.value;
    const hit = await perKey.hit(requestBudgetOf(request.caller));
    reply.header("x-ratelimit-limit", String(perKey.limit));
    reply.header("x-ratelimit-remaining", String(hit.remaining));
    reply.header("x-ratelimit-reset", String(Math.ceil(hit.retryInMs / 1000)));
    if (!hit.allowed)
      return tooMany(
        reply,
        hit.retryInMs,
        `Rate limit exceeded: ${perKey.limit} requests per minute`,
      );
  });
}

/** The per-key budget of requests (RATE_LIMIT_PER_MINUTE), one for the API and the dashboard. */
export function requestsPerKey(counters: RateCounters, perMinute: number): RateCounter {
  return counters("key", perMinute, MINUTE);
}

/** Sets a 429's Retry-After: whole seconds, at least 1; returns them for the message. */
export function setRetryAfter(reply: FastifyReply, retryInMs: number): number {
  const seconds = Math.max(1, Math.ceil(retryInMs / 1000));
  reply.header("retry-after", String(seconds));
  return seconds;
}

function tooMany(reply: FastifyReply, retryInMs: number, what: string) {
  const seconds = setRetryAfter(reply, retryInMs);
  return reply.code(429).send(errorBody(429, `${what}; retry in ${seconds} seconds`));
}
