import { createServer, type Server } from "node:http";
import swagger from "@fastify/swagger";
import Fastify, {
  type FastifyHttpOptions,
  type FastifyInstance,
  type FastifyReply,
  type FastifyServerOptions,
} from "fastify";
import { serializerCompiler } from "fastify-type-provider-zod";
import { type HttpConfig, httpUrl } from "../config.js";
import type { Caller } from "../domain/caller.js";
import type { Services } from "../services/index.js";
import { limitConnectionsPerAddress } from "./abuse/connections.js";
import { exportSlots, limitExportsPerKey } from "./abuse/exports.js";
import { idleTimeoutWhileAnswering } from "./abuse/idle-timeout.js";
import { shedLoadAbove } from "./abuse/in-flight.js";
import { localCounters, type RateCounters } from "./abuse/rate-counters.js";
import {
  authenticateWithLimits,
  authFailureBudget,
  limitRequestsPerAddress,
  requestsPerKey,
} from "./abuse/rate-limits.js";
import { noStore, securityHeaders } from "./abuse/security-headers.js";
import { closeConnectionsWhileDraining, refuseWhileClosing } from "./closing.js";
import { dashboardRoutes, sendRefusedPathPage } from "./dashboard/index.js";
import type { SharedLimits } from "./dashboard/page.js";
import { errorBody, errorHandler, INTERNAL_ERROR_MESSAGE } from "./errors.js";
import { type MetricsExposure, metricsRoute, observeRequests } from "./metrics.js";
import { openApiOptions } from "./openapi.js";
import { protocolErrorHandler } from "./protocol-errors.js";
import { acceptUtf8JsonOnly, emptyBodiesAreNoBodies } from "./request-bodies.js";
import { requestIdOf } from "./request-id.js";
import { docsRoutes } from "./routes/docs.js";
import { healthRoutes } from "./routes/health.js";
import { obligationRoutes } from "./routes/obligations.js";
import { referenceRoutes } from "./routes/reference.js";
import { reportCardRoutes } from "./routes/report-card.js";
import { reportRoutes } from "./routes/reports.js";
import { rootRoutes } from "./routes/root.js";
import { scorecardRoutes } from "./routes/scorecards.js";
import { submissionRoutes } from "./routes/submissions.js";
import { webhookSecretRoutes } from "./routes/webhook-secret.js";
import { webhookRoutes } from "./routes/webhooks.js";
import { validatorCompiler } from "./zod-validation.js";

declare module "fastify" {
  interface FastifyRequest {
    caller: Caller;
  }
}

export type AppOptions = {
  services: Services;
  http: HttpConfig;
  logger: FastifyServerOptions["logger"];
  /** GET /metrics: request figures observed; the route on this port only with a token. */
  metrics?: MetricsExposure;
  /** Where rate limits count (default: in this process). */
  rateCounters?: RateCounters;
  /** True once the process is shutting down: `/readyz` answers 503 (see serve.ts). */
  draining?: () => boolean;
};

const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** Node reads at most 16 KiB of headers, the request line included: no parameter is longer. */
const MAX_PATH_PARAMETER_LENGTH = 16_384;

const isApiPath = (url: string) => url.startsWith("/api/");

/**
 * The router's refusals of a path, by error code: such a path names nothing, a 404. A
 * parameter over MAX_PATH_PARAMETER_LENGTH reaches here only where Node is allowed longer
 * headers (`--max-http-header-size`).
 */
const PATH_REFUSALS: Record<string, string> = {
  FST_ERR_BAD_URL: "has an invalid percent-encoding",
  FST_ERR_MAX_PARAM_LENGTH: "has a segment longer than any id",
};

/** Builds the HTTP application; never listens (main.ts and tests decide that). */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { services, http } = options;
  const app = Fastify(serverOptions(options));

  app.decorateRequest("caller", null as unknown as Caller);
  acceptUtf8JsonOnly(app);
  app.setErrorHandler(errorHandler({ maxProblems: http.maxProblemsPerResponse }));
  app.setNotFoundHandler((request, reply) => {
    if (isApiPath(request.url)) reply.header("cache-control", "no-store");
    return reply
      .code(404)
      .send(errorBody(404, `Route ${request.method} ${request.url.split("?")[0]} not found`));
  });

  addRequestHooks(app, options);

  // Routes declare Zod schemas: they validate queries, check responses and, collected by
  // @fastify/swagger (registered before any route), make the OpenAPI document.
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // The document's server: PUBLIC_URL, else the address the server listens on (the document is
  // made on its first request), else HOST and PORT.
  const publicUrl = () => http.publicUrl ?? listeningUrl(app.server) ?? http.listenUrl;
  await app.register(swagger, openApiOptions({ ...http, publicUrl }));
  await app.register(healthRoutes(services, options.draining));
  await app.register(docsRoutes());
  await app.register(rootRoutes());
  await app.register(metricsRoute(options.metrics));
  const limits = sharedLimitsOf(options);
  await app.register(async (api) => {
    noStore(api);
    authenticateWithLimits(api, {
      authenticate: services.authenticate,
      failures: limits.authFailures,
      perKey: limits.requestsPerKey,
    });
    limitExportsPerKey(api, limits.exports);
    emptyBodiesAreNoBodies(api);
    await api.register(reportRoutes(services));
    await api.register(referenceRoutes(services));
    await api.register(obligationRoutes(services));
    await api.register(scorecardRoutes(services));
    await api.register(webhookRoutes(services));
    await api.register(webhookSecretRoutes(services));
    await api.register(submissionRoutes(services));
    await api.register(reportCardRoutes(services));
  });
  await app.register(dashboardRoutes(services, http, limits), { prefix: "/app" });
  return app;
}

/** What every request goes through before its route: ids, metrics, headers and limits. */
function addRequestHooks(app: FastifyInstance, options: AppOptions): void {
  const { http } = options;
  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
  });
  if (options.metrics !== undefined) observeRequests(app, options.metrics.metrics);
  securityHeaders(app);
  closeConnectionsWhileDraining(app, options.draining);
  refuseWhileClosing(app);
  idleTimeoutWhileAnswering(app, http.idleTimeoutMs);
  limitRequestsPerAddress(app, {
    perMinute: http.rateLimitPerAddressPerMinute,
    healthProbesPerMinute: http.healthProbesPerAddressPerMinute,
    counters: options.rateCounters,
  });
  shedLoadAbove(app, http.maxInFlightRequests);
}

function listeningUrl(server: Server): string | undefined {
  const address = server.address();
  return typeof address === "object" && address !== null
    ? httpUrl(address.address, address.port)
    : undefined;
}

/** Fastify's options: limits, request ids, and the Node server with its timeouts. */
function serverOptions(options: AppOptions): FastifyHttpOptions<Server> {
  const { http } = options;
  return {
    logger: options.logger,
    bodyLimit: http.bodyLimitBytes,
    requestTimeout: http.requestTimeoutMs,
    connectionTimeout: http.idleTimeoutMs,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    genReqId: requestIdOf,
    // Behind a balancer: the client address is the one it forwards (X-Forwarded-For), from
    // these addresses only (TRUST_PROXY); the per-address limits count it.
    trustProxy: http.trustProxy ?? false,
    // `__proto__` and `constructor.prototype` keys are dropped like any other unknown field.
    onProtoPoisoning: "remove",
    onConstructorPoisoning: "remove",
    // A request reaching a closing server gets the API's 503 (refuseWhileClosing), not
    // Fastify's own answer without Retry-After.
    return503OnClosing: false,
    clientErrorHandler: protocolErrorHandler(http.requestTimeoutMs),
    routerOptions: {
      // A path parameter of any length reaches its route (after the API key): an id longer
      // than any id names nothing, a 404; the router's default cut-off (100) answered a bare 414.
      maxParamLength: MAX_PATH_PARAMETER_LENGTH,
    },
    // A path the router cannot decode (bad percent-encoding) never reaches a route or a hook:
    // like any path that names nothing, it is a 404, with the headers every answer carries: in
    // the API's shape, or the dashboard's page under /app.
    frameworkErrors: (error, request, rawReply) => {
      const reply = rawReply as FastifyReply;
      reply.header("x-request-id", request.id).header("x-content-type-options", "nosniff");
      if (isApiPath(request.url)) reply.header("cache-control", "no-store");
      const why = PATH_REFUSALS[error.code];
      // The only other framework error is FST_ERR_ASYNC_CONSTRAINT, and no route has one.
      if (why === undefined) {
        request.log.error({ err: error }, "request failed");
        return reply.code(500).send(errorBody(500, INTERNAL_ERROR_MESSAGE));
      }
      // No hook runs for these answers: they are counted here, under `unmatched`.
      reply.raw.once("finish", () =>
        options.metrics?.metrics.observeRequest(
          request.method,
          undefined,
          404,
          reply.elapsedTime / 1000,
        ),
      );
      if (request.url === "/app" || request.url.startsWith("/app/"))
        return sendRefusedPathPage(request, reply, why);
      return reply.code(404).send(errorBody(404, `Not found: the path ${why}`));
    },
    // Slow clients: headers, like the whole request, must arrive within the timeout. Node
    // checks those timeouts every `connectionsCheckingInterval` (30 s by default: too coarse).
    // With a server factory Fastify applies neither `connectionTimeout` nor
    // `keepAliveTimeout`: they are set here, or a client that stops reading holds its
    // connection for ever.
    serverFactory: (handler) => {
      const server = createServer(
        {
          headersTimeout: http.requestTimeoutMs,
          requestTimeout: http.requestTimeoutMs,
          connectionsCheckingInterval: Math.min(1_000, http.requestTimeoutMs),
          keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
        },
        handler,
      );
      // No byte received and none taken by the client for this long: the socket is destroyed
      // (paused while a request is worked on, see idle-timeout.ts).
      server.setTimeout(http.idleTimeoutMs);
      limitConnectionsPerAddress(server, http.maxConnectionsPerAddress);
      return server;
    },
  };
}

/**
 * One budget each for the API and the dashboard: failed authentications per address, requests
 * per key, and CSV exports streaming at once per key.
 */
function sharedLimitsOf(options: AppOptions): SharedLimits {
  const counters = options.rateCounters ?? localCounters;
  return {
    authFailures: authFailureBudget(counters, options.http.authFailuresPerMinute),
    requestsPerKey: requestsPerKey(counters, options.http.rateLimitPerMinute),
    exports: exportSlots(options.http.maxExportsPerKey),
  };
}
