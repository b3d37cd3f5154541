import { createHmac, randomBytes } from "node:crypto";
import { retryAfterMs } from "./retry-after.js";

/** A new endpoint's signing secret: `whsec_` and the base64 of 32 random bytes (CONTRACT 7). */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/**
 * The `webhook-signature` header of Standard Webhooks: `v1,` and the base64 HMAC-SHA256 of
 * `<id>.<timestamp>.<body>`, keyed with the base64-decoded part of the secret after `whsec_`.
 */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const mac = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64");
  return `v1,${mac}`;
}

/** The longest a replaced secret may stay valid after a rotation: 7 days, in seconds. */
export const MAX_PREVIOUS_SECRET_SECONDS = 7 * 24 * 3600;
/** How long a replaced secret stays valid when the rotation does not say: 24 hours. */
export const DEFAULT_PREVIOUS_SECRET_SECONDS = 24 * 3600;

/** A secret a rotation replaced, valid (it still signs deliveries) until `expiresAt`. */
export type PreviousSecret = { secret: string; expiresAt: Date };

/** An endpoint's secrets: the current one, and those it replaced, newest first. */
export type SigningSecrets = { secret: string; previousSecrets: readonly PreviousSecret[] };

/** At most this many replaced secrets are valid at once (each adds a signature to a delivery). */
export const MAX_PREVIOUS_SECRETS = 10;

/**
 * The replaced secrets after a rotation at `now`: none when the rotation ends them at once
 * (`expiresAt` null: a leak), else the secret replaced, valid until `expiresAt`, before the
 * earlier ones still valid, so that a receiver holding any of them keeps verifying. `too_many`
 * past MAX_PREVIOUS_SECRETS.
 */
export function secretsAfterRotation(
  replaced: string,
  previous: readonly PreviousSecret[],
  expiresAt: Date | null,
  now: Date,
): PreviousSecret[] | "too_many" {
  if (expiresAt === null) return [];
  const valid = previous.filter((p) => p.expiresAt.getTime() > now.getTime());
  if (valid.length >= MAX_PREVIOUS_SECRETS) return "too_many";
  return [{ secret: replaced, expiresAt }, ...valid];
}

/**
 * The `webhook-signature` header of an attempt at `at`: the current secret's signature, then
 * that of each replaced secret still valid, space-separated (Standard Webhooks: a verifier
 * accepts the delivery when any one signature matches its secret).
 */
export function signatureHeader(
  secrets: SigningSecrets,
  at: Date,
  id: string,
  timestamp: number,
  body: string,
): string {
  const valid = secrets.previousSecrets.filter((p) => at.getTime() < p.expiresAt.getTime());
  return [secrets.secret, ...valid.map((p) => p.secret)]
    .map((secret) => signWebhook(secret, id, timestamp, body))
    .join(" ");
}

/**
 * The body of every attempt of a delivery: the event's type, timestamp and the data as stored
 * (its text, so that the bytes signed are the same on every attempt).
 */
export function webhookBody(type: string, occurredAt: Date, dataJson: string): string {
  const head = JSON.stringify({ type, timestamp: occurredAt.toISOString() });
  return `${head.slice(0, -1)},"data":${dataJson}}`;
}

/** Default WEBHOOK_RETRY_SCHEDULE: the delays (seconds) before the 2nd, 3rd, … attempt. */
export const DEFAULT_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 36000];

/** Why a pending delivery of an endpoint that was disabled fails. */
export const DISABLED_NOT_SENT = "not sent: the webhook was disabled";

/** Why a pending delivery of an event type its endpoint no longer subscribes to fails. */
export const UNSUBSCRIBED_NOT_SENT =
  "not sent: the webhook no longer subscribes to this event type";

/** An endpoint whose every delivery failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 60 * 60 * 1000;

/**
 * When the next attempt is due after a failed one (`attempts` made so far, this one
 * included), or null when the schedule is spent and the delivery has failed.
 */
export function nextAttemptAt(schedule: readonly number[], attempts: number, at: Date) {
  const delay = schedule[attempts - 1];
  return delay === undefined ? null : new Date(at.getTime() + delay * 1000);
}

/** What an attempt came to: an HTTP status (2xx: success) or an error before one. */
export type AttemptOutcome = {
  statusCode: number | null;
  /** Null on success; else why it failed, with a short excerpt of the answer. */
  error: string | null;
  /** A 429's or 503's Retry-After, in seconds (the receiver asked to wait), when it gave one. */
  retryAfterSeconds?: number;
};

/** The longest wait a receiver's Retry-After may impose on one delivery's next attempt: 24 h. */
export const MAX_RECEIVER_RETRY_AFTER_SECONDS = 24 * 3600;

/**
 * A Retry-After header's wait in seconds (RFC 9110 10.2.3: a number of seconds or an HTTP
 * date), capped at MAX_RECEIVER_RETRY_AFTER_SECONDS; undefined when absent or unreadable.
 */
export function retryAfterSeconds(header: string | undefined, at: Date): number | undefined {
  const text = header?.trim() ?? "";
  // Stricter than retryAfterMs alone: a whole number of seconds (however many digits: a huge
  // one is the longest wait) or an HTTP date in its one current form (IMF-fixdate); free
  // text is no date, however Date.parse reads it.
  if (!/^\d+$/.test(text) && !HTTP_DATE.test(text)) return undefined;
  const capMs = MAX_RECEIVER_RETRY_AFTER_SECONDS * 1000;
  const ms = /^\d{16,}$/.test(text) ? capMs : retryAfterMs(text, capMs, at.getTime());
  return ms === undefined || ms <= 0 ? undefined : Math.ceil(ms / 1000);
}

/** RFC 9110 5.6.7 IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`. */
const HTTP_DATE =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/**
 * The next scheduled attempt, put off until the receiver's Retry-After has passed when that is
 * later; none when the schedule is used up (a Retry-After adds no attempt).
 */
export function postponedBy(scheduled: Date | null, at: Date, retryAfter: number | undefined) {
  if (scheduled === null || retryAfter === undefined) return scheduled;
  return new Date(Math.max(scheduled.getTime(), at.getTime() + retryAfter * 1000));
}

export const succeeded = (o: AttemptOutcome) =>
  o.statusCode !== null && o.statusCode >= 200 && o.statusCode < 300;
