import { isUtf8 } from "node:buffer";
import type { IncomingHttpHeaders } from "node:http";
import { errorCodes, type FastifyInstance, type FastifyRequest } from "fastify";
import { LARGE_BODY_BYTES, parseDataArrayInPieces } from "./json-pieces.js";

/**
 * JSON bodies only, and in UTF-8 (RFC 8259). Decoded as text, a byte that is not would become
 * U+FFFD, and two different values (a Latin-1 `é` and `ÿ` in a quote symbol) the same stored
 * key: such a body is malformed JSON, refused like any other, whatever charset it names.
 */
export function acceptUtf8JsonOnly(app: FastifyInstance): void {
  // Fastify parses text/plain bodies into strings by default; the API speaks JSON only, so
  // any other content type is a 415 (CONTRACT section 2), not a confusing 400.
  app.removeContentTypeParser("text/plain");
  const parseJson = app.getDefaultJsonParser("remove", "remove");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    // No route takes it: the answer is the 404, whatever the body (an empty one included).
    if (request.is404) return done(null, undefined);
    if (!isIdentityCoded(request.headers["content-encoding"]))
      return done(new UnsupportedContentEncoding());
    const bytes = body as Buffer;
    if (!isUtf8(bytes)) return done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY());
    if (bytes.length > LARGE_BODY_BYTES) {
      const parsed = parseDataArrayInPieces(bytes, (text) => parsedOrUndefined(request, text));
      if (parsed !== undefined) return done(null, parsed);
    }
    return parseJson(request, bytes.toString("utf8"), done);
  });

  /**
   * The same parser on a piece of a body: its value, or undefined where it would refuse. It
   * answers before returning; were it ever to answer later, every piece would read as refused
   * and the whole body be parsed, as before.
   */
  function parsedOrUndefined(request: FastifyRequest, text: string): unknown {
    let parsed: unknown;
    parseJson(request, text, (error, value) => {
      if (error === null) parsed = value;
    });
    return parsed;
  }
}

/**
 * A route that takes no body (DELETE /api/v1/webhooks/{id}, POST …/test, …/retry), or takes
 * an optional one (…/rotate-secret), answers an empty body labelled `application/json` as if
 * none came: many clients send that header on every call. Routes that need a body still
 * answer an empty one "Malformed JSON body".
 */
export function emptyBodiesAreNoBodies(api: FastifyInstance): void {
  api.addHook("onRequest", async (request) => {
    if (hasNoBody(request.headers) && takesNoBody(request.routeOptions.schema?.body))
      delete request.headers["content-type"];
  });
}

/** No body schema, or one that no body satisfies (an optional body). */
function takesNoBody(schema: unknown): boolean {
  if (schema === undefined) return true;
  const parse = (schema as { safeParse?: (value: unknown) => { success: boolean } }).safeParse;
  return typeof parse === "function" && parse.call(schema, undefined).success;
}

/** `Content-Length: 0`, or neither a length nor a transfer coding (as `curl -X DELETE` sends). */
function hasNoBody(headers: IncomingHttpHeaders): boolean {
  const length = headers["content-length"];
  return length === "0" || (length === undefined && headers["transfer-encoding"] === undefined);
}

/**
 * A compressed body (`Content-Encoding: gzip`) is not decoded: read as JSON it would be
 * "Malformed JSON body", which sends its sender looking in the wrong place. RFC 9110 section
 * 8.4.1 answers an unacceptable content coding with 415, and so do we.
 */
export class UnsupportedContentEncoding extends Error {
  readonly code = "TR_ERR_UNSUPPORTED_CONTENT_ENCODING";
  readonly statusCode = 415;
  constructor() {
    super("Unsupported Content-Encoding: send the body uncompressed");
  }
}

function isIdentityCoded(contentEncoding: string | undefined): boolean {
  return (contentEncoding ?? "").split(",").every((coding) => {
    const name = coding.trim().toLowerCase();
    return name === "" || name === "identity";
  });
}
