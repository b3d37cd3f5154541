import cookie from "@fastify/cookie";
import formbody from "@fastify/formbody";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { HttpConfig } from "../../config.js";
import type { Services } from "../../services/index.js";
import { assetRoutes } from "./assets.js";
import { dashboardErrorHandler, sendErrorPage } from "./error-page.js";
import type { DashboardPage, DashboardRequestState, NavEntry, SharedLimits } from "./page.js";
import { DASHBOARD_PAGES } from "./pages/index.js";
import { clearSessionCookie, cookiePolicy, requireSession } from "./session.js";
import { signInRoutes } from "./sign-in.js";

/** Scripts, styles and images from this server only; no inline script; no framing. */
export const DASHBOARD_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "base-uri 'none'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
].join("; ");

const FORM_BODY_LIMIT = 16 * 1024;

/** What every dashboard answer carries: never cached, no framing, no script from elsewhere. */
export function dashboardHeaders(reply: FastifyReply): void {
  reply.header("cache-control", "no-store");
  reply.header("content-security-policy", DASHBOARD_CONTENT_SECURITY_POLICY);
  reply.header("x-frame-options", "DENY");
  reply.header("referrer-policy", "same-origin");
}

/**
 * A dashboard address the router refused (a bad percent-encoding, a segment too long): no
 * route or hook saw it, so it gets the dashboard's headers and its 404 page here (see app.ts).
 * `why` completes "its path …".
 */
export function sendRefusedPathPage(
  request: FastifyRequest,
  reply: FastifyReply,
  why: string,
): FastifyReply {
  dashboardHeaders(reply);
  return sendErrorPage(request, reply, 404, [`There is no page at this address: its path ${why}.`]);
}

/**
 * The dashboard under `/app` (register with `prefix: "/app"`): HTML pages rendered on the
 * server from the same services as the API, behind a session opened with an API key. Kept out
 * of the OpenAPI document (every route is hidden): it is not part of the API.
 */
export function dashboardRoutes(services: Services, http: HttpConfig, limits: SharedLimits) {
  return async (app: FastifyInstance) => {
    app.decorateRequest("dashboard", null as unknown as DashboardRequestState);
    // Forms only here: the API keeps answering 415 to anything but JSON.
    await app.register(formbody, { bodyLimit: FORM_BODY_LIMIT });
    await app.register(cookie);
    app.setErrorHandler(dashboardErrorHandler);
    app.setNotFoundHandler((request, reply) => {
      const queryAt = request.url.indexOf("?");
      const path = queryAt < 0 ? request.url : request.url.slice(0, queryAt);
      const query = queryAt < 0 ? undefined : request.url.slice(queryAt + 1);
      // `/app/overview/` is `/app/overview`: a trailing slash is a typing habit, not a page.
      const trimmed = path.replace(/\/+$/, "");
      if (request.method === "GET" && trimmed !== path && trimmed.startsWith("/app/"))
        return reply.redirect(query === undefined ? trimmed : `${trimmed}?${query}`, 301);
      return sendErrorPage(request, reply, 404, [`There is no page ${path}.`]);
    });
    app.addHook("onRequest", async (_request, reply) => {
      dashboardHeaders(reply);
    });
    const policy = cookiePolicy(http.publicUrl);
    const nav: NavEntry[] = DASHBOARD_PAGES.flatMap((page) => page.nav ?? []);
    assetRoutes(app);
    signInRoutes(app, { services, policy, nav, failures: limits.authFailures });
    await app.register(async (signedIn) => {
      requireSession(signedIn, { services, policy, nav, requestsPerKey: limits.requestsPerKey });
      signedIn.post("/sign-out", { schema: { hide: true } }, async (request, reply) => {
        const token = request.cookies[policy.name];
        if (token !== undefined) await services.dashboardSessions.signOut(token);
        clearSessionCookie(reply, policy);
        return reply.redirect("/app", 303);
      });
      for (const page of DASHBOARD_PAGES)
        await signedIn.register(pageScope(page, services, http, limits));
    });
  };
}

/** A page's routes, for the caller kinds it names (another kind gets a 403 page). */
function pageScope(
  page: DashboardPage,
  services: Services,
  http: HttpConfig,
  limits: SharedLimits,
) {
  return async (scope: FastifyInstance) => {
    scope.addHook("preHandler", async (request, reply) => {
      if (!page.kinds.includes(request.dashboard.caller.kind)) {
        return sendErrorPage(request, reply, 403, ["This page is not available to your API key."]);
      }
    });
    await page.routes(scope, services, http, limits);
  };
}
