import { randomUUID } from "node:crypto";
import { maxHeaderSize, type ServerResponse, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyInstance } from "fastify";
import { type ErrorBody, errorBody } from "./errors.js";

type ParserError = Error & { code?: string; reason?: string };

/**
 * Fastify's `clientErrorHandler`: the answer to a request that Node's HTTP parser refuses before
 * any route or hook sees it (a malformed request line, header or chunk, a Content-Length beside
 * a Transfer-Encoding, headers over Node's `maxHeaderSize` (16 KiB), a request not whole within
 * REQUEST_TIMEOUT_MS). Fastify's own answer is a 400 whose message is the string "Client
 * Error", without the headers every answer carries; this one is in the service's shape (a 400
 * in the array form, CONTRACT section 2) with a request id of its own (the request's cannot be
 * read), says what was wrong, and closes the connection, whose
 * bytes can no longer be read as requests.
 */
export function protocolErrorHandler(requestTimeoutMs: number) {
  return function answerProtocolError(
    this: FastifyInstance,
    error: ParserError,
    socket: Socket,
  ): void {
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    const body = protocolErrorBody(error, requestTimeoutMs);
    this.log.debug({ err: error, statusCode: body.statusCode }, "malformed request refused");
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
    // The bytes refused came after a request read whole (say, data after its `Connection:
    // close`): that request is being answered, and its answer, not a 400, is the one its
    // sender must get (a batch it carried may be stored). The rest is dropped, and the
    // connection closed once the answer is out.
    if (inFlight?.req?.complete === true && !inFlight.writableFinished) {
      socket.pause();
      closeAfterAnswers(socket, inFlight);
      return;
    }
    // As Node does: no answer into the middle of another one (a pipelined request's) already
    // begun on this connection; the peer would read it as part of that one.
    if (socket.writable && inFlight?.headersSent !== true) {
      const text = JSON.stringify(body);
      socket.write(
        `HTTP/1.1 ${body.statusCode} ${STATUS_CODES[body.statusCode]}\r\n` +
          "Content-Type: application/json; charset=utf-8\r\n" +
          `Content-Length: ${Buffer.byteLength(text)}\r\n` +
          `X-Request-Id: ${randomUUID()}\r\n` +
          "X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n" +
          text,
      );
    }
    socket.destroy();
  };
}

/**
 * Closes the connection once the answer in flight is out, and the answers of the requests read
 * whole behind it (pipelined: Node gives the socket to the next answer as one ends).
 */
function closeAfterAnswers(socket: Socket, answer: ServerResponse): void {
  answer.once("close", () => {
    // null once an answer let go of the socket and none took it.
    const next = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (
      next !== undefined &&
      next !== null &&
      next !== answer &&
      !next.writableFinished &&
      !socket.destroyed
    )
      closeAfterAnswers(socket, next);
    // Not destroy(): the answers handed to the socket may not all be flushed yet.
    else socket.destroySoon();
  });
}

/** The status and message for a parser's error code, as Node itself would choose the status. */
export function protocolErrorBody(error: ParserError, requestTimeoutMs: number): ErrorBody {
  switch (error.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return errorBody(408, `Request not received whole within ${requestTimeoutMs} ms`);
    case "HPE_HEADER_OVERFLOW":
      return errorBody(431, `Request line and headers are larger than ${maxHeaderSize / 1024} KiB`);
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return errorBody(413, "Chunk extensions are larger than the limit");
    default:
      // llhttp's reason, such as "Invalid character in chunk size": the request's fault, worded
      // by the parser; nothing of the server's state is in it.
      return errorBody(
        400,
        error.reason === undefined
          ? "Malformed HTTP request"
          : `Malformed HTTP request: ${error.reason}`,
      );
  }
}
