import type { z } from "zod";
import { backoffMs, retryAfterMs } from "../retry.js";

export type RetryInfo = {
  url: string;
  /** 1 for the first retry. */
  attempt: number;
  delayMs: number;
  status?: number;
  error?: string;
};

export class CoinGeckoError extends Error {
  override readonly name = "CoinGeckoError";
  constructor(
    message: string,
    readonly url: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const BACKOFF_BASE_MS = 1_000;
const BACKOFF_CAP_MS = 30_000;
// A Retry-After above this is not waited for blindly: a day-long ban should fail the sync.
const RETRY_AFTER_CAP_MS = 120_000;

/** How the client talks to CoinGecko: where, with which headers, and how it retries. */
export type Transport = {
  baseUrl: string;
  headers: Record<string, string>;
  fetch: typeof fetch;
  maxRetries: number;
  sleep: (ms: number) => Promise<void>;
  timeoutMs: number;
  onRetry?: (info: RetryInfo) => void;
};

/** A GET of `path` whose JSON body is checked against `schema`, retried as the transport says. */
export function createGet(transport: Transport) {
  return async <T>(path: string, query: Record<string, string>, schema: z.ZodType<T>) => {
    const search = new URLSearchParams(query).toString();
    const url = `${transport.baseUrl}${path}${search ? `?${search}` : ""}`;
    const response = await fetchWithRetry(transport, url);
    let body: unknown;
    try {
      body = await response.json();
    } catch (error) {
      throw new CoinGeckoError(`CoinGecko ${path} returned a body that is not JSON`, url, 200, {
        cause: error,
      });
    }
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue?.path.length ? issue.path.join(".") : "(root)";
      throw new CoinGeckoError(
        `CoinGecko ${path} returned an unexpected response at ${where}: ${issue?.message ?? "invalid"}`,
        url,
        200,
      );
    }
    return parsed.data;
  };
}

async function fetchWithRetry(transport: Transport, url: string): Promise<Response> {
  const { headers, maxRetries, sleep, timeoutMs, onRetry } = transport;
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await transport.fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      const reason = networkFailure(error, url, timeoutMs);
      if (attempt >= maxRetries) {
        const tries = attempt > 0 ? ` after ${attempt + 1} attempts` : "";
        const message = `CoinGecko request to ${url} failed: ${reason}${tries}`;
        throw new CoinGeckoError(message, url, undefined, { cause: error });
      }
      const delayMs = backoff(attempt);
      onRetry?.({ url, attempt: attempt + 1, delayMs, error: reason });
      await sleep(delayMs);
      continue;
    }
    if (response.ok) return response;
    const retryable = response.status === 429 || response.status >= 500;
    // Drain the body so that the connection can be reused.
    const text = await response.text().catch(() => "");
    if (!retryable || attempt >= maxRetries) {
      const tries = attempt > 0 ? ` after ${attempt + 1} attempts` : "";
      throw new CoinGeckoError(
        `CoinGecko request to ${url} failed with status ${response.status}${tries}${excerpt(text)}`,
        url,
        response.status,
      );
    }
    const delayMs =
      retryAfterMs(response.headers.get("retry-after"), RETRY_AFTER_CAP_MS) ?? backoff(attempt);
    onRetry?.({ url, attempt: attempt + 1, delayMs, status: response.status });
    await sleep(delayMs);
  }
}

/**
 * What went wrong below HTTP, in words an operator can act on: fetch itself only says
 * "fetch failed" and keeps the system error (its code) in `cause`.
 */
export function networkFailure(error: unknown, url: string, timeoutMs: number): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return `no answer within ${timeoutMs} ms (timeout)`;
  }
  const cause = error instanceof Error ? error.cause : undefined;
  const code =
    typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : "";
  const host = URL.canParse(url) ? new URL(url).host : url;
  switch (code) {
    case "ECONNREFUSED":
      return `connection refused by ${host} (ECONNREFUSED)`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `DNS lookup of ${new URL(url).hostname} failed (${code})`;
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
      return `connection to ${host} closed unexpectedly (${code})`;
    case "UND_ERR_CONNECT_TIMEOUT":
    case "ETIMEDOUT":
      return `connecting to ${host} timed out (${code})`;
  }
  const detail = cause instanceof Error ? cause.message : "";
  const message = error instanceof Error ? error.message : String(error);
  return detail ? `${message}: ${detail}` : message;
}

function backoff(attempt: number): number {
  return backoffMs(attempt + 1, { baseMs: BACKOFF_BASE_MS, capMs: BACKOFF_CAP_MS });
}

function excerpt(text: string): string {
  const trimmed = text.trim().replace(/\s+/g, " ");
  if (!trimmed) return "";
  return `: ${trimmed.length > 200 ? `${trimmed.slice(0, 200)}…` : trimmed}`;
}
