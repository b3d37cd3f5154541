import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { FastifyInstance } from "fastify";
import type { Metrics } from "../metrics/metrics.js";
import { errorBody } from "./errors.js";

export type MetricsExposure = {
  metrics: Metrics;
  /** METRICS_TOKEN: `Authorization: Bearer <token>` is required to read /metrics. */
  token: string | undefined;
};

/** Every answered request, by method, route pattern and status (never the raw URL). */
export function observeRequests(app: FastifyInstance, metrics: Metrics): void {
  app.addHook("onResponse", (request, reply, done) => {
    metrics.observeRequest(
      request.method,
      request.routeOptions.url,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });
}

/**
 * `GET /metrics` on the API's own port, behind METRICS_TOKEN (hidden from the OpenAPI
 * document); without a token, no route at all (a 404 like any unknown path).
 */
export function metricsRoute(exposure: MetricsExposure | undefined) {
  return async (app: FastifyInstance) => {
    const token = exposure?.token;
    if (exposure === undefined || token === undefined) return;
    app.get("/metrics", { schema: { hide: true } }, async (request, reply) => {
      if (!bearerMatches(request.headers.authorization, token)) {
        return reply
          .code(401)
          .header("www-authenticate", 'Bearer realm="metrics"')
          .send(errorBody(401, "Missing or wrong metrics token"));
      }
      const text = await exposure.metrics.scrape();
      return reply
        .header("cache-control", "no-store")
        .type(exposure.metrics.contentType)
        .send(text);
    });
  };
}

/**
 * METRICS_PORT: a listener of its own (METRICS_HOST, loopback by default) that answers
 * `GET /metrics` and nothing else; with METRICS_TOKEN set it asks for the token too.
 */
export async function listenForMetrics(
  exposure: MetricsExposure,
  address: { host: string; port: number },
): Promise<Server> {
  const server = createServer((request, response) => {
    answerMetrics(exposure, request, response).catch((error: unknown) => {
      response.destroy(error instanceof Error ? error : undefined);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(address.port, address.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}

async function answerMetrics(
  exposure: MetricsExposure,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const path = (request.url ?? "").split("?")[0];
  const json = (status: number, message: string, headers: Record<string, string> = {}) => {
    response.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
    response.end(JSON.stringify(errorBody(status, message)));
  };
  if (path !== "/metrics") return json(404, `Route ${request.method} ${path} not found`);
  if (request.method !== "GET" && request.method !== "HEAD") {
    return json(405, "Only GET /metrics", { allow: "GET, HEAD" });
  }
  const token = exposure.token;
  if (token !== undefined && !bearerMatches(request.headers.authorization, token)) {
    return json(401, "Missing or wrong metrics token", {
      "www-authenticate": 'Bearer realm="metrics"',
    });
  }
  const text = await exposure.metrics.scrape();
  response.writeHead(200, {
    "content-type": exposure.metrics.contentType,
    "cache-control": "no-store",
  });
  response.end(request.method === "HEAD" ? undefined : text);
}

/** Compared as digests, in constant time: the answer says nothing of how much matched. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  if (match?.[1] === undefined) return false;
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(match[1]), digest(token));
}
