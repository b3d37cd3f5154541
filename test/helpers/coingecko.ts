import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

// A stand-in for the CoinGecko API on 127.0.0.1, serving bodies shaped like recorded responses.

/**
 * A reply: a status and JSON body (a string is sent as it is), no answer at all, or a 200 whose
 * body begins with `partial` (sent chunked) and never ends.
 */
export type Reply =
  | { status?: number; headers?: Record<string, string>; body: unknown }
  | { partial: string }
  | "drop"
  | "hang";
export type Route = (query: URLSearchParams) => Reply;
export type SeenRequest = { path: string; query: URLSearchParams; headers: IncomingHttpHeaders };

const running = new Set<Server>();

/**
 * Serves `routes` (paths under /api/v3; anything else answers 404) and returns the base URL,
 * the requests it saw and a way to stop it. Call stopCoinGecko in afterEach.
 */
export async function startCoinGecko(routes: Record<string, Route>) {
  const requests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const path = url.pathname.replace(/^\/api\/v3/, "");
    requests.push({ path, query: url.searchParams, headers: req.headers });
    const reply: Reply = routes[path]?.(url.searchParams) ?? {
      status: 404,
      body: { error: "Not Found" },
    };
    if (reply === "drop") {
      req.socket.destroy();
      return;
    }
    if (reply === "hang") return; // never answers; stopCoinGecko closes the connection
    if ("partial" in reply) {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(reply.partial);
      return;
    }
    res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers });
    res.end(typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body));
  });
  running.add(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/api/v3`,
    requests,
    server,
    stop: () => stop(server),
  };
}

async function stop(server: Server) {
  if (!running.delete(server)) return;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/** Stops every server startCoinGecko started. */
export async function stopCoinGecko() {
  await Promise.all([...running].map(stop));
}

/** Answers `replies` in order, then repeats the last one. */
export function sequence(...replies: Reply[]): Route {
  let call = 0;
  return () => replies[Math.min(call++, replies.length - 1)] ?? { status: 500, body: {} };
}

export const ok =
  (body: unknown): Route =>
  () => ({ body });
