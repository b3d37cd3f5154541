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
  /** A larger body fails the request at once (not retried). */
  maxBodyBytes: number;
  onRetry?: (info: RetryInfo) => void;
};

/** A GET of `path` whose JSON body is checked against `schema`, retried as the transport says. */
export function createGet(transport: Transport) {
  return async <T>(path: string, query: Record<string, string>, schema: z.ZodType<T>) => {
    const search = new URLSearchParams(query).toString();
    const url = `${transport.baseUrl}${path}${search ? `?${search}` : ""}`;
    const body = await fetchWithRetry(transport, url);
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

/** One attempt's outcome: the JSON body, or why it failed and whether to try again. */
type Attempt =
  | { ok: true; body: unknown }
  | {
      ok: false;
      reason: string;
      status?: number;
      retryable: boolean;
      delayMs?: number;
      cause?: unknown;
    };

/**
 * The JSON body of `url`, retrying 429s, 5xx, network failures and bodies that time out or
 * arrive cut short (truncated JSON) as transient.
 */
async function fetchWithRetry(transport: Transport, url: string): Promise<unknown> {
  const { maxRetries, sleep, onRetry } = transport;
  for (let attempt = 0; ; attempt++) {
    const outcome = await attemptGet(transport, url);
    if (outcome.ok) return outcome.body;
    if (!outcome.retryable || attempt >= maxRetries) {
      const tries = attempt > 0 ? ` after ${attempt + 1} attempts` : "";
      const message = `CoinGecko request to ${url} failed${outcome.status === undefined ? ":" : ""} ${outcome.reason}${tries}`;
      throw new CoinGeckoError(message, url, outcome.status, { cause: outcome.cause });
    }
    const delayMs = outcome.delayMs ?? backoff(attempt);
    const { status } = outcome;
    onRetry?.({
      url,
      attempt: attempt + 1,
      delayMs,
      ...(status === undefined ? { error: outcome.reason } : { status }),
    });
    await sleep(delayMs);
  }
}

async function attemptGet(transport: Transport, url: string): Promise<Attempt> {
  const { headers, timeoutMs } = transport;
  let response: Response;
  try {
    response = await transport.fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    return {
      ok: false,
      reason: networkFailure(error, url, timeoutMs),
      retryable: true,
      cause: error,
    };
  }
  if (!response.ok) return failedStatus(response);
  let text: string;
  try {
    text = await readBody(response, transport.maxBodyBytes);
  } catch (error) {
    if (error instanceof BodyTooLarge)
      return { ok: false, reason: error.message, retryable: false };
    const reason = `reading the body: ${networkFailure(error, url, timeoutMs)}`;
    return { ok: false, reason, retryable: true, cause: error };
  }
  try {
    return { ok: true, body: JSON.parse(text) };
  } catch (error) {
    // Cut short by a proxy or a dropped connection, most often: worth another attempt.
    const reason = `returned a body that is not JSON (truncated?): ${error instanceof Error ? error.message : String(error)}`;
    return { ok: false, reason, retryable: true, cause: error };
  }
}

/** A non-2xx answer: 429 and 5xx are retried, after Retry-After when given within the cap. */
async function failedStatus(response: Response): Promise<Attempt> {
  const { status } = response;
  // Drain the body so that the connection can be reused.
  const text = await readBody(response, 64 * 1024).catch(() => "");
  const reason = `with status ${status}${excerpt(text)}`;
  if (status !== 429 && status < 500) return { ok: false, status, reason, retryable: false };
  const header = response.headers.get("retry-after");
  const wait = retryAfterMs(header, Number.POSITIVE_INFINITY);
  if (wait !== undefined && wait > RETRY_AFTER_CAP_MS) {
    const over = `with status ${status} and Retry-After ${header} (longer than the ${RETRY_AFTER_CAP_MS / 1000} s a sync waits): try again later`;
    return { ok: false, status, reason: over, retryable: false };
  }
  return { ok: false, status, reason, retryable: true, delayMs: wait };
}

class BodyTooLarge extends Error {}

/** The body as text, refused past `maxBytes` (by Content-Length, or as it arrives). */
async function readBody(response: Response, maxBytes: number): Promise<string> {
  const tooLarge = () =>
    new BodyTooLarge(`returned a body larger than ${maxBytes} bytes (the client's cap)`);
  const length = Number(response.headers.get("content-length"));
  if (Number.isFinite(length) && length > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (response.body === null) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
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
