import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Services } from "../../services/index.js";
import type { RateCounter } from "../abuse/rate-counters.js";
import { requestBudgetOf, setRetryAfter } from "../abuse/rate-limits.js";
import { sendErrorPage } from "./error-page.js";
import type { NavEntry } from "./page.js";

/**
 * The session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's page
 * sends it), Secure behind HTTPS. `__Host-` (Secure, Path=/, no Domain) stops a sibling
 * subdomain from planting a session of its own.
 */
export type CookiePolicy = {
  name: string;
  secure: boolean;
  /** PUBLIC_URL's host: a form posted from there is ours even when a proxy rewrites Host. */
  publicHost: string | undefined;
};

/** Secure cookies when PUBLIC_URL is https: the service is then reached through TLS. */
export function cookiePolicy(publicUrl: string | undefined): CookiePolicy {
  const secure = publicUrl?.startsWith("https://") ?? false;
  const publicHost = publicUrl === undefined ? undefined : new URL(publicUrl).host;
  return { name: secure ? "__Host-tr_session" : "tr_session", secure, publicHost };
}

export function setSessionCookie(reply: FastifyReply, policy: CookiePolicy, token: string): void {
  reply.setCookie(policy.name, token, {
    path: "/",
    httpOnly: true,
    sameSite: "strict",
    secure: policy.secure,
  });
}

export function clearSessionCookie(reply: FastifyReply, policy: CookiePolicy): void {
  reply.clearCookie(policy.name, {
    path: "/",
    httpOnly: true,
    sameSite: "strict",
    secure: policy.secure,
  });
}

/**
 * A POST from a page of another origin is refused, whatever it carries (a browser always sends
 * `Origin` with a form POST). Host, not scheme, is compared: behind a TLS proxy the scheme
 * the server sees is not the browser's.
 */
export function foreignOrigin(request: FastifyRequest, policy: CookiePolicy): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  try {
    const host = new URL(origin).host;
    return host !== request.headers.host && host !== policy.publicHost;
  } catch {
    return true;
  }
}

/** The `csrf` field of a form body, if any. */
export function csrfFieldOf(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const value = (body as Record<string, unknown>).csrf;
  return typeof value === "string" ? value : undefined;
}

/**
 * The signed-in scope's gate: resumes the session of the cookie (else back to sign-in, the
 * stale cookie cleared) and, on a POST, requires the session's CSRF token and this origin.
 */
export function requireSession(
  app: FastifyInstance,
  deps: {
    services: Services;
    policy: CookiePolicy;
    nav: readonly NavEntry[];
    /** The key's budget of requests, one with the API's: a session spends its key's. */
    requestsPerKey: RateCounter;
  },
): void {
  app.addHook("preHandler", async (request, reply) => {
    const token = request.cookies[deps.policy.name];
    const session =
      token === undefined ? undefined : await deps.services.dashboardSessions.resume(token);
    if (session === undefined) {
      if (token !== undefined) clearSessionCookie(reply, deps.policy);
      return reply.redirect("/app", 303);
    }
    if (request.method === "POST") {
      if (foreignOrigin(request, deps.policy) || csrfFieldOf(request.body) !== session.csrfToken) {
        return sendErrorPage(request, reply, 403, [CSRF_REFUSAL]);
      }
    }
    request.dashboard = { ...session, nav: deps.nav };
    // As on the API: hooks shared with it (the export limit) read the caller here.
    request.caller = session.caller;
    const hit = await deps.requestsPerKey.hit(requestBudgetOf(session.caller));
    if (!hit.allowed) {
      const seconds = setRetryAfter(reply, hit.retryInMs);
      return sendErrorPage(request, reply, 429, [
        `Rate limit exceeded: ${deps.requestsPerKey.limit} requests per minute for your API key; retry in ${seconds} seconds`,
      ]);
    }
  });
}

const CSRF_REFUSAL =
  "This form was not sent from a page of this dashboard (its security token is missing or out of date). Reload the page and try again.";
