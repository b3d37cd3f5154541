import { createHash, type Hash } from "node:crypto";
import { pipeline, Transform } from "node:stream";
import type { FastifyReply, FastifyRequest, preParsingAsyncHookHandler } from "fastify";
import { ValidationError } from "../domain/errors.js";
import type { SchemaVersion } from "../domain/report.js";
import { idempotencyKeySchema } from "../schemas/idempotency.js";
import type { SubmissionResult } from "../schemas/report.js";
import type { IdempotentRequest } from "../services/idempotency.js";
import type { StoredResponse } from "../store/idempotency-store.js";
import { headerCount } from "./repeated-headers.js";

const KEY_HEADER = "idempotency-key";
const REPLAYED_HEADER = "idempotent-replayed";

/** The running digest of each keyed request's raw body, fed as the body streams in. */
const bodyDigests = new WeakMap<FastifyRequest, Hash>();

/**
 * A keyed request's body is hashed as received, before parsing: two requests are the same
 * when their bytes are, whatever JSON would make of them. Requests without a key pass as they are.
 */
export const hashBodyOfKeyedRequest: preParsingAsyncHookHandler = async (request, _, payload) => {
  if (request.headers[KEY_HEADER] === undefined) return payload;
  const digest = createHash("sha256");
  bodyDigests.set(request, digest);
  const tee = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      digest.update(chunk);
      done(null, chunk);
    },
  });
  // A failing upload fails the tee, which fails the body parser as the upload would have.
  return pipeline(payload, tee, () => undefined);
};

/**
 * The request's Idempotency-Key (400 with path `Idempotency-Key` when malformed) with what
 * makes two requests the same and how a 201 is rendered for keeping; undefined without a key.
 */
export function idempotencyOf(
  request: FastifyRequest,
  reply: FastifyReply,
  submission: { version: SchemaVersion; dryRun: boolean; submissionId?: string },
): IdempotentRequest | undefined {
  const header = request.headers[KEY_HEADER];
  if (header === undefined) return undefined;
  const sent = headerCount(request, KEY_HEADER);
  if (sent > 1) {
    throw new ValidationError([
      { path: "Idempotency-Key", message: `Expected one Idempotency-Key header, received ${sent}` },
    ]);
  }
  const key = idempotencyKeySchema.safeParse(header);
  if (!key.success) {
    throw new ValidationError([
      { path: "Idempotency-Key", message: "Expected 1 to 255 printable ASCII characters" },
    ]);
  }
  const body = bodyDigests.get(request)?.digest("hex") ?? "";
  const requestHash = createHash("sha256")
    .update(`v${submission.version}\ndry-run=${submission.dryRun}\n${body}`)
    .digest("hex");
  const render = (result: SubmissionResult): StoredResponse => {
    reply.code(201);
    // Kept with the answer and sent again on its replays: they name the submission that was kept.
    const headers: Record<string, string> = {};
    if (submission.submissionId !== undefined) headers["x-submission-id"] = submission.submissionId;
    return { statusCode: 201, body: String(reply.serialize(result)), headers };
  };
  return { key: key.data, requestHash, render };
}

/** Sends a kept (or just kept) answer as stored; a replay says so. */
export function sendIdempotent(
  reply: FastifyReply,
  answer: { response: StoredResponse; replayed: boolean },
) {
  const { response, replayed } = answer;
  for (const [name, value] of Object.entries(response.headers)) reply.header(name, value);
  if (replayed) reply.header(REPLAYED_HEADER, "true");
  // A string with a JSON type is sent as it is: the very bytes kept.
  return reply
    .code(response.statusCode)
    .type("application/json; charset=utf-8")
    .send(response.body);
}
