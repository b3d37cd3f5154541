import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { Agent, request } from "undici";
import { type AttemptOutcome, retryAfterSeconds } from "../domain/webhook.js";
import { forbiddenAddress, urlProblem } from "../domain/webhook-target.js";

export type TargetPolicy = {
  /** WEBHOOK_ALLOW_INSECURE: http:// and non-public addresses allowed. */
  allowInsecure: boolean;
  /** Name resolution (the system's, unless a test resolves names its own way). */
  lookup?: typeof dnsLookup;
};

/** At most this much of an answer is read and kept (the delivery log's excerpt). */
const EXCERPT_BYTES = 200;
const MAX_ERROR_LENGTH = 300;

/**
 * Why `url` may not be a webhook target, or null: the URL's own rules, then every address its
 * host is or resolves to must be public (unless insecure targets are allowed).
 */
export async function targetProblem(url: string, policy: TargetPolicy): Promise<string | null> {
  const problem = urlProblem(url, policy.allowInsecure);
  if (problem !== null || policy.allowInsecure) return problem;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) !== 0) return forbiddenAddress(host);
  const resolve = policy.lookup ?? dnsLookup;
  const addresses = await new Promise<LookupAddress[] | Error>((done) =>
    resolve(host, { all: true }, (error, found) => done(error ?? found)),
  );
  if (addresses instanceof Error) return `Host '${host}' does not resolve`;
  for (const { address } of addresses) {
    const forbidden = forbiddenAddress(address);
    if (forbidden !== null) return `Host '${host}' resolves to a forbidden address: ${forbidden}`;
  }
  return null;
}

/**
 * A name lookup for the connections of deliveries: it resolves, refuses any non-public
 * address, and hands the checked addresses to the socket, which connects to them and not to a
 * second answer of the DNS (rebinding).
 */
function checkedLookup(policy: TargetPolicy): LookupFunction {
  const resolve = policy.lookup ?? dnsLookup;
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, found) => {
      if (error) return callback(error, "", 0);
      const addresses = found as unknown as LookupAddress[];
      const refused = addresses.map((a) => forbiddenAddress(a.address)).find((p) => p !== null);
      if (refused !== undefined && refused !== null && !policy.allowInsecure)
        return callback(new Error(`refused: ${refused}`), "", 0);
      const first = addresses[0];
      if (options.all) return callback(null, addresses as never, 0);
      if (first === undefined) return callback(new Error(`${hostname} has no address`), "", 0);
      return callback(null, first.address, first.family);
    });
  };
}

export type WebhookSender = {
  /** POSTs one attempt (redirects not followed); never throws. */
  send(url: string, headers: Record<string, string>, body: string): Promise<AttemptOutcome>;
  close(): Promise<void>;
};

export function createWebhookSender(policy: TargetPolicy & { timeoutMs: number }): WebhookSender {
  const agent = new Agent({
    connect: { lookup: checkedLookup(policy), timeout: policy.timeoutMs },
    headersTimeout: policy.timeoutMs,
    bodyTimeout: policy.timeoutMs,
  });
  return {
    async send(url, headers, body) {
      const problem = literalProblem(url, policy);
      if (problem !== null) return { statusCode: null, error: problem };
      try {
        const answer = await request(url, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body,
          dispatcher: agent,
          signal: AbortSignal.timeout(policy.timeoutMs),
        });
        const ok = answer.statusCode >= 200 && answer.statusCode < 300;
        // A success keeps no excerpt: its body is not read (one that never ended held the
        // attempt's slot for the whole timeout).
        if (ok) {
          // Destroyed unread, it reports an abort nobody needs to hear of.
          answer.body.on("error", () => {}).destroy();
          return { statusCode: answer.statusCode, error: null };
        }
        const excerpt = await excerptOf(answer.body);
        const wait = [429, 503].includes(answer.statusCode)
          ? retryAfterSeconds(headerText(answer.headers["retry-after"]), new Date())
          : undefined;
        return {
          statusCode: answer.statusCode,
          error: clip(`HTTP ${answer.statusCode}${excerpt ? `: ${excerpt}` : ""}`),
          ...(wait === undefined ? {} : { retryAfterSeconds: wait }),
        };
      } catch (error) {
        return { statusCode: null, error: clip(describe(error, policy.timeoutMs)) };
      }
    },
    close: () => agent.close(),
  };
}

/** The URL's rules, and a host that is an IP literal (connected to without any lookup). */
function literalProblem(url: string, policy: TargetPolicy): string | null {
  const problem = urlProblem(url, policy.allowInsecure);
  if (problem !== null || policy.allowInsecure) return problem && `refused: ${problem}`;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) === 0) return null;
  const forbidden = forbiddenAddress(host);
  return forbidden === null ? null : `refused: ${forbidden}`;
}

/** The first bytes of an answer; the rest is not read. */
async function excerptOf(body: AsyncIterable<Buffer> & { destroy(): unknown }) {
  let bytes = Buffer.alloc(0);
  try {
    for await (const chunk of body) {
      bytes = Buffer.concat([bytes, chunk]);
      if (bytes.length >= EXCERPT_BYTES) break;
    }
  } catch {
    // An answer cut short: its excerpt is what arrived.
  } finally {
    body.destroy();
  }
  // Streaming: a character cut at the last byte is left out, not turned into U+FFFD.
  return new TextDecoder().decode(bytes.subarray(0, EXCERPT_BYTES), { stream: true }).trim();
}

function describe(error: unknown, timeoutMs: number): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === "TimeoutError" || /timeout/i.test(error.name))
    return `no answer within ${timeoutMs} ms`;
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.message}${cause}`;
}

/**
 * The log's text of a failed attempt: one line, at most MAX_ERROR_LENGTH characters. The
 * receiver chooses the bytes: a control character (NUL above all, which PostgreSQL text
 * refuses) or a lone surrogate becomes U+FFFD, and the cut never splits a surrogate pair.
 */
function clip(text: string): string {
  const line = [
    ...text
      .replace(/\s+/g, " ")
      .replace(/[\p{Cc}\p{Cs}]/gu, "\uFFFD")
      .trim(),
  ];
  return line.length > MAX_ERROR_LENGTH
    ? `${line.slice(0, MAX_ERROR_LENGTH - 1).join("")}…`
    : line.join("");
}

/** A header's one value (a repeated header: its first). */
const headerText = (value: string | string[] | undefined) =>
  Array.isArray(value) ? value[0] : value;
