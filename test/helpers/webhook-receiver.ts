import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export type Received = {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
};

/**
 * A webhook receiver on a loopback port: records every request by path, and answers each
 * path with the statuses queued for it (then 200). `hang` paths never answer; `slow` paths
 * answer after a delay. `peak` is the most requests a path had open at once.
 */
export async function startReceiver() {
  const received: Received[] = [];
  const answers = new Map<string, number[]>();
  const hanging = new Set<string>();
  const delays = new Map<string, number>();
  const retryAfters = new Map<string, string>();
  const open = new Map<string, number>();
  const peaks = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    const path = request.url ?? "/";
    const now = (open.get(path) ?? 0) + 1;
    open.set(path, now);
    peaks.set(path, Math.max(peaks.get(path) ?? 0, now));
    response.on("close", () => open.set(path, (open.get(path) ?? 1) - 1));
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on("end", () => {
      received.push({ path, headers: request.headers, body });
      if (hanging.has(path)) return;
      const status = answers.get(path)?.shift() ?? 200;
      const answer = () => {
        const retryAfter = retryAfters.get(path);
        response.writeHead(status, {
          ...(status === 302 ? { location: "http://127.0.0.1:9/" } : {}),
          ...(retryAfter === undefined ? {} : { "retry-after": retryAfter }),
        });
        response.end(status >= 300 ? `nope ${"x".repeat(1000)}` : "ok");
      };
      const delay = delays.get(path);
      if (delay === undefined) answer();
      else setTimeout(answer, delay);
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    at: (path: string) => received.filter((r) => r.path === path),
    /** The next answers of `path` (then 200). */
    answer: (path: string, ...statuses: number[]) => answers.set(path, statuses),
    hang: (path: string, on = true) => (on ? hanging.add(path) : hanging.delete(path)),
    /** Sends this Retry-After header with every answer of `path`. */
    retryAfter: (path: string, value: string) => retryAfters.set(path, value),
    /** Answers `path` after `ms`. */
    slow: (path: string, ms: number) => delays.set(path, ms),
    /** The most requests `path` had open at once. */
    peak: (path: string) => peaks.get(path) ?? 0,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** The event of a request, verified with the published Standard Webhooks library (throws if not). */
export function verified(secret: string, request: Received) {
  const headers = Object.fromEntries(
    ["webhook-id", "webhook-timestamp", "webhook-signature"].map((name) => [
      name,
      String(request.headers[name]),
    ]),
  );
  return new Webhook(secret).verify(request.body, headers) as {
    type: string;
    timestamp: string;
    data: Record<string, unknown>;
  };
}

/** Resolves once `condition` holds (checked every 50 ms), else fails after `ms`. */
export async function eventually<T>(
  condition: () => T | false | undefined | Promise<T | false | undefined>,
  what: string,
  ms = 20_000,
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
