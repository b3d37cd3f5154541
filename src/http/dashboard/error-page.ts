import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { DomainError, ValidationError } from "../../domain/errors.js";
import { RETRY_AFTER_SECONDS, STATUS_OF_KIND } from "../errors.js";
import { html } from "./html.js";
import { documentOf, sendHtml, sendPage } from "./layout.js";

const TITLES: Record<number, string> = {
  400: "Check the filters",
  401: "Signed out",
  403: "Not available to your key",
  404: "Not found",
  409: "Conflict",
  422: "Not possible",
  429: "Too many at once",
  503: "Temporarily unavailable",
};

/** A page saying what went wrong; with the navigation when the caller is signed in. */
export function sendErrorPage(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  messages: readonly string[],
): FastifyReply {
  const title = TITLES[status] ?? "Something went wrong";
  const body = html`<div class="error" role="alert">${messages.map((m) => html`<p>${m}</p>`)}</div>
<p><a href="/app">Back to the dashboard</a></p>`;
  if (request.dashboard !== null && request.dashboard !== undefined) {
    return sendPage(request, reply, { title, body, status, current: "" });
  }
  return sendHtml(reply.code(status), documentOf({ title, body }));
}

/** The dashboard's error handler: the API's statuses, as pages; internals never shown. */
export function dashboardErrorHandler(
  error: FastifyError | Error,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  if (error instanceof DomainError) {
    const status = STATUS_OF_KIND[error.kind];
    if (status === 503) reply.header("retry-after", String(RETRY_AFTER_SECONDS.unavailable));
    const messages =
      error instanceof ValidationError
        ? error.problems.map((p) => (p.path === undefined ? p.message : `${p.path}: ${p.message}`))
        : [error.message];
    return sendErrorPage(request, reply, status, messages);
  }
  const status = (error as FastifyError).statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    return sendErrorPage(request, reply, status, [error.message]);
  }
  request.log.error({ err: error }, "dashboard request failed");
  return sendErrorPage(request, reply, 500, [
    "Internal server error; retry in a couple of minutes.",
  ]);
}
