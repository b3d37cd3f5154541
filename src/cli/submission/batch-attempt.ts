import { z } from "zod";
import type { ReportsClient, V1Record, V2Record } from "../../client/index.js";
import { retryAfterMs } from "../../retry.js";
import { batchJson } from "./batch-json.js";
import { batchIdempotencyKey } from "./batch-keys.js";
import type { SubmitBatchesOptions } from "./submission-types.js";

/** The spec says to retry 5xx "after a couple of minutes": honour Retry-After up to this. */
const MAX_RETRY_AFTER_MS = 300_000;
export const UNREADABLE = "the service's answer could not be read";

export const countsSchema = z.object({ createdCount: z.number(), updatedCount: z.number() });
export const messageSchema = z.object({ message: z.string() });

/**
 * Errors that mean the request never reached the service: nothing can have been stored.
 * Any other network error (a connection closed or reset, a timeout) may come after the
 * service received the batch, and stored it.
 */
const UNREACHED =
  /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ERR_SSL_|ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_)/;

export type Attempt =
  | {
      kind: "response";
      status: number;
      body: unknown;
      text: string;
      retryAfterMs?: number;
      /** The service answered an identical earlier request's kept 201 (Idempotency-Key). */
      replayed: boolean;
    }
  /** `reached`: false when the request cannot have reached the service (refused, DNS, TLS). */
  | { kind: "network"; message: string; reached: boolean }
  /**
   * A success whose body is not JSON: the batch may be stored or not. Retried with the same
   * Idempotency-Key, which the service answers with its kept 201 if it was.
   */
  | { kind: "unreadable"; message: string };

/**
 * One request through the typed client. The records go as they were read: the service judges
 * them (every problem at once), so they are not the client's record types yet.
 */
export async function send(
  client: ReportsClient,
  records: readonly unknown[],
  options: SubmitBatchesOptions,
): Promise<Attempt> {
  const header = {
    "idempotency-key": batchIdempotencyKey(options, records),
    ...(options.dryRun ? { "x-dry-run": "true" as const } : {}),
  };
  const init = {
    params: { header },
    signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
    bodySerializer: batchJson,
  };
  try {
    const { data, error, response } =
      options.version === "v1"
        ? await client.POST("/api/v1/report", { ...init, body: { data: records as V1Record[] } })
        : await client.POST("/api/v2/report", { ...init, body: { data: records as V2Record[] } });
    const retryAfter = retryAfterMs(response.headers.get("retry-after"), MAX_RETRY_AFTER_MS);
    const body: unknown = data ?? error;
    const text = typeof body === "string" ? body : (JSON.stringify(body) ?? "");
    const replayed = response.headers.get("idempotent-replayed") === "true";
    const { status } = response;
    return { kind: "response", status, body, text, retryAfterMs: retryAfter, replayed };
  } catch (error) {
    // A success whose body is not JSON: the batch may or may not be stored.
    if (error instanceof SyntaxError) return { kind: "unreadable", message: UNREADABLE };
    return networkAttempt(error);
  }
}

/**
 * An attempt after which the batch may be stored although this run was not told so: the
 * connection lost after the request went out, a timeout, an unreadable answer, a 5xx other
 * than 503 (a gateway's 502/504 comes whether or not the service behind it stored the batch),
 * or a 409 (another request with the batch's Idempotency-Key is being stored).
 */
export function answerLost(attempt: Attempt): boolean {
  if (attempt.kind === "unreadable") return true;
  if (attempt.kind === "network") return attempt.reached;
  const { status } = attempt;
  if (status === 200 || status === 201) return !countsSchema.safeParse(attempt.body).success;
  return status === 409 || (status >= 500 && status !== 503);
}

/**
 * Why no batch can reach the service, after a batch's retries ended so: the connection was
 * refused (or DNS, TLS failed), or the submission route is not found (the URL is wrong).
 */
export function unreachable(attempt: Attempt): string | undefined {
  if (attempt.kind === "network" && !attempt.reached) return "the service could not be reached";
  if (attempt.kind === "response" && attempt.status === 404)
    return "the service has no submission route at this URL (check --url)";
  return undefined;
}

/**
 * An attempt of this run's own that may have stored the batch unanswered: a lost answer, but
 * not a 409 (another request holds the key: possibly another run's).
 */
export function ownAnswerLost(attempt: Attempt): boolean {
  return answerLost(attempt) && !(attempt.kind === "response" && attempt.status === 409);
}

export function isRetryable(attempt: Attempt): boolean {
  if (attempt.kind !== "response") return true;
  // 409: an earlier attempt of this batch is still being stored; its answer will be replayed.
  const { status } = attempt;
  // A success without the counts (a proxy's page, a body cut short): as an unreadable one.
  if (status === 200 || status === 201) return !countsSchema.safeParse(attempt.body).success;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

export function describeFailure(attempt: Attempt): string {
  if (attempt.kind !== "response") return attempt.message;
  const message = messageSchema.safeParse(attempt.body);
  const detail = message.success ? message.data.message : attempt.text.trim().slice(0, 200);
  return `HTTP ${attempt.status}${detail ? `: ${detail}` : ""}`;
}

function networkAttempt(error: unknown): Attempt {
  if (error instanceof Error && error.name === "TimeoutError")
    return { kind: "network", message: "request timed out", reached: true };
  const cause = error instanceof Error ? error.cause : undefined;
  const text = cause instanceof Error ? cause.message : error instanceof Error ? error.message : "";
  const code = cause instanceof Error ? (cause as NodeJS.ErrnoException).code : undefined;
  const reached = !UNREACHED.test(code ?? "");
  const detail = code?.startsWith("ERR_SSL_")
    ? `TLS: ${openSslReason(text)} (${code})`
    : text.trim();
  return { kind: "network", message: `network error${detail ? `: ${detail}` : ""}`, reached };
}

/**
 * OpenSSL's error text is its queue, `<thread>:error:<code>:<library>:<function>:<reason>:
 * <source file>:<line>:`, ending in a newline: its reason is what a user can read.
 */
function openSslReason(text: string): string {
  const fields = text.trim().split(":");
  return fields[1] === "error" && fields[5] ? fields[5] : text.trim();
}
