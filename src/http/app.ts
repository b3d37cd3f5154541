import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import rateLimit from "@fastify/rate-limit";
import swagger from "@fastify/swagger";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import { serializerCompiler } from "fastify-type-provider-zod";
import type { HttpConfig } from "../config.js";
import { hashApiKey, keyFromAuthorization } from "../domain/api-key.js";
import type { Caller } from "../domain/caller.js";
import type { Services } from "../services/index.js";
import { errorBody, handleError, overloadedRetryAfter } from "./errors.js";
import { openApiOptions } from "./openapi.js";
import { docsRoutes } from "./routes/docs.js";
import { healthRoutes } from "./routes/health.js";
import { referenceRoutes } from "./routes/reference.js";
import { reportRoutes } from "./routes/reports.js";
import { rootRoutes } from "./routes/root.js";
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
};

const REQUEST_ID = /^[A-Za-z0-9._-]{1,100}$/;

/** Builds the HTTP application; never listens (main.ts and tests decide that). */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { services, http } = options;
  const app = Fastify({
    logger: options.logger,
    bodyLimit: http.bodyLimitBytes,
    requestTimeout: http.requestTimeoutMs,
    connectionTimeout: http.requestTimeoutMs,
    keepAliveTimeout: 5_000,
    // A client may pass its own request id (to follow a request through its logs too).
    genReqId: (req) => {
      const given = req.headers["x-request-id"];
      return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // `__proto__` and `constructor.prototype` keys are dropped like any other unknown field.
    onProtoPoisoning: "remove",
    onConstructorPoisoning: "remove",
    return503OnClosing: true,
    // Slow clients: headers, like the whole request, must arrive within the timeout. Node
    // checks those timeouts every `connectionsCheckingInterval` (30 s by default: too coarse).
    serverFactory: (handler) =>
      createServer(
        {
          headersTimeout: http.requestTimeoutMs,
          requestTimeout: http.requestTimeoutMs,
          connectionsCheckingInterval: Math.min(1_000, http.requestTimeoutMs),
        },
        handler,
      ),
  });

  app.decorateRequest("caller", null as unknown as Caller);
  // Fastify parses text/plain bodies into strings by default; the API speaks JSON only, so
  // any other content type is a 415 (CONTRACT section 2), not a confusing 400.
  app.removeContentTypeParser("text/plain");
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send(errorBody(404, `Route ${request.method} ${request.url.split("?")[0]} not found`)),
  );

  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
  });
  shedLoadAbove(app, http.maxInFlightRequests);

  await app.register(rateLimit, {
    max: http.rateLimitPerMinute,
    timeWindow: 60_000,
    // Per API key (hashed: the key itself never sits in memory longer than needed); clients
    // without a key share their address's budget.
    keyGenerator: (request) => {
      // The key as authentication reads it: `KEY`, `Bearer KEY` and ` KEY ` share one budget,
      // so rewriting the header cannot buy a fresh one.
      const key = keyFromAuthorization(request.headers.authorization);
      return key !== undefined ? `key:${hashApiKey(key)}` : `ip:${request.ip}`;
    },
    allowList: (request) => request.url === "/healthz" || request.url === "/readyz",
    errorResponseBuilder: (_request, context) => ({
      ...errorBody(
        429,
        `Rate limit exceeded: ${context.max} requests per minute; retry in ${context.after}`,
      ),
    }),
  });

  // Routes declare Zod schemas: they validate queries, check responses and, collected by
  // @fastify/swagger (registered before any route), make the OpenAPI document.
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  await app.register(swagger, openApiOptions);
  await app.register(healthRoutes(services));
  await app.register(docsRoutes());
  await app.register(rootRoutes());
  await app.register(async (api) => {
    api.addHook("onRequest", async (request) => {
      request.caller = await services.authenticate(request.headers.authorization);
    });
    await api.register(reportRoutes(services));
    await api.register(referenceRoutes(services));
  });
  return app;
}

/**
 * Bounded concurrency: past `max` requests in flight, answer 503 at once rather than queue
 * work (and memory) without limit.
 */
function shedLoadAbove(app: FastifyInstance, max: number) {
  let inFlight = 0;
  app.addHook("onRequest", async (request, reply) => {
    if (inFlight >= max) {
      reply.header("retry-after", String(overloadedRetryAfter));
      return reply.code(503).send(errorBody(503, "Server overloaded; retry shortly"));
    }
    inFlight++;
    reply.raw.once("close", () => {
      inFlight--;
    });
    request.log.trace({ inFlight }, "request admitted");
  });
}
