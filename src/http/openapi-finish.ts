import { CSV_ATTACHMENTS, markOptionalBodies } from "./openapi-special-cases.js";
import { REQUEST_ID_MAX_LENGTH } from "./request-id.js";

export type DocumentOptions = {
  /** Where clients reach the service: the document's one server (asked when it is made). */
  publicUrl: () => string;
  /** Problems a 400 lists at most (MAX_PROBLEMS_PER_RESPONSE), plus the "… more" entry. */
  maxProblemsPerResponse: number;
  /** Requests per minute and API key (RATE_LIMIT_PER_MINUTE). */
  rateLimitPerMinute: number;
};

type Schema = Record<string, unknown>;
type Response = {
  headers?: Record<string, unknown>;
  content?: Record<string, unknown>;
  $ref?: string;
};
type Operation = {
  operationId?: string;
  security?: unknown[];
  parameters?: { in?: string; name?: string }[];
  responses?: Record<string, Response>;
};
type Document = {
  info: Record<string, unknown>;
  servers?: unknown[];
  security?: unknown[];
  paths: Record<string, Record<string, Operation>>;
  components?: {
    schemas?: Record<string, Schema>;
    headers?: Record<string, unknown>;
    responses?: Record<string, Response>;
  };
};

/** Rate limits count per minute: no wait or reset is longer. */
const WINDOW_SECONDS = 60;

const seconds = { type: "integer", format: "int32", minimum: 0, maximum: WINDOW_SECONDS };

/** The headers the service sends (see abuse/ and app.ts), defined once in the components. */
function headers(options: DocumentOptions) {
  const perMinute = {
    type: "integer",
    format: "int32",
    minimum: 0,
    maximum: options.rateLimitPerMinute,
  };
  return {
    "X-Request-Id": {
      description:
        "This request's id: the client's own `X-Request-Id` when it is 1 to 100 of A-Z a-z 0-9 . _ -, else a new UUID. Logged with the request.",
      schema: { type: "string", pattern: "^[A-Za-z0-9._-]+$", maxLength: REQUEST_ID_MAX_LENGTH },
    },
    "X-Content-Type-Options": {
      description: "Always `nosniff`",
      schema: { type: "string", const: "nosniff" },
    },
    "Cache-Control": {
      description: "Always `no-store`: answers with an organization's data are not cached",
      schema: { type: "string", const: "no-store" },
    },
    "X-RateLimit-Limit": {
      description:
        "Requests this API key may make per minute (RATE_LIMIT_PER_MINUTE). Sent once the key authenticated.",
      schema: perMinute,
    },
    "X-RateLimit-Remaining": {
      description: "Requests left to this key in the current minute",
      schema: perMinute,
    },
    "X-RateLimit-Reset": {
      description: "Seconds until the current minute of this key ends",
      schema: seconds,
    },
    "Retry-After": {
      description: "Seconds to wait before retrying",
      schema: { ...seconds, minimum: 1 },
    },
    "Idempotent-Replayed": {
      description:
        "`true` when this is the kept answer of an earlier request with the same Idempotency-Key (nothing was stored again); absent otherwise",
      schema: { type: "string", const: "true" },
    },
    "X-Submission-Id": {
      description:
        "This submission's id in the submission log (GET /api/v1/submissions/{id}): on every answer that decided on the submission (201, 400, 403, 409, 413, 415, 422), dry runs included; a replay names the submission it repeats",
      schema: { type: "string", format: "uuid", maxLength: 36 },
    },
    Location: {
      description: "The created webhook's path, `/api/v1/webhooks/{id}`",
      schema: { type: "string", pattern: "^/api/v1/webhooks/[0-9a-f-]{36}$", maxLength: 53 },
    },
    ...CSV_ATTACHMENTS,
  } as const;
}

/** The name a header component is sent under, where it is not its own. */
const SENT_AS: Partial<Record<string, string>> = {
  "Scorecards-Content-Disposition": "Content-Disposition",
};

type HeaderName = keyof ReturnType<typeof headers>;

const IDEMPOTENCY_KEY = "idempotency-key";
/** The answers of a submission endpoint that the submission log records (see submission-feedback.ts). */
const LOGGED_STATUSES = new Set(["201", "400", "403", "409", "413", "415", "422"]);

/**
 * Which headers an answer carries, by the kind of operation and the status: every answer has a
 * request id and `nosniff`; an authenticated operation's answers are `no-store` and, once the
 * key authenticated (so not on a 401), carry its rate limit; a 429 or a 503 says when to retry;
 * a CSV answer is an attachment; the 201 of an operation that takes an Idempotency-Key may be a
 * replay; a created webhook's 201 says where it is.
 */
function headersOf(operation: Operation, status: string, response: Response): HeaderName[] {
  const names: HeaderName[] = ["X-Request-Id", "X-Content-Type-Options"];
  const authenticated = (operation.security?.length ?? 0) > 0;
  if (authenticated) {
    names.push("Cache-Control");
    if (status !== "401")
      names.push("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset");
  }
  if (status === "429" || status === "503") names.push("Retry-After");
  if (response.content?.["text/csv"] !== undefined)
    names.push(
      operation.operationId === "listReports"
        ? "Content-Disposition"
        : "Scorecards-Content-Disposition",
    );
  const keyed = operation.parameters?.some((p) => p.in === "header" && p.name === IDEMPOTENCY_KEY);
  if (keyed && status === "201") names.push("Idempotent-Replayed");
  if (operation.operationId?.startsWith("submitReports") && LOGGED_STATUSES.has(status))
    names.push("X-Submission-Id");
  if (operation.operationId === "createWebhook" && status === "201") names.push("Location");
  return names;
}

/**
 * The last step of the document: its server, the headers of every answer (as references to
 * the components), the limits that come from the configuration, and no unused component (the
 * request-side copies of the answers' named schemas).
 */
export function finishDocument(document: Document, options: DocumentOptions): void {
  const url = options.publicUrl();
  document.info.contact = { name: "API reference", url: `${url}/docs` };
  // x-internal: false says the server is meant for the API's outside clients.
  document.servers = [
    {
      url,
      description:
        "This deployment (production, staging or a local instance): PUBLIC_URL, else where it listens",
      "x-internal": false,
    },
  ];
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations)) {
      const security = operation.security ?? document.security ?? [];
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const names = headersOf({ ...operation, security }, status, response);
        response.headers = {
          ...Object.fromEntries(
            names.map((name) => [SENT_AS[name] ?? name, { $ref: `#/components/headers/${name}` }]),
          ),
          ...response.headers,
        };
      }
    }
  }
  markOptionalBodies(document);
  document.components = { ...document.components, headers: headers(options) };
  shareUnauthorized(document);
  const schemas = document.components.schemas ?? {};
  const badRequest = schemas.BadRequest?.properties as Record<string, Schema> | undefined;
  // A 400 lists at most MAX_PROBLEMS_PER_RESPONSE problems, then one "… and N more" entry.
  if (badRequest?.message !== undefined) {
    badRequest.message.maxItems = options.maxProblemsPerResponse + 1;
  }
  dropUnusedSchemas(document, schemas);
}

/**
 * Every authenticated operation answers the same 401 (no key was counted, so it carries no
 * rate limit): one component response that the operations refer to.
 */
function shareUnauthorized(document: Document): void {
  let shared: Response | undefined;
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations)) {
      const responses = operation.responses ?? {};
      const response = responses["401"];
      if (response === undefined) continue;
      shared ??= response;
      if (JSON.stringify(response) === JSON.stringify(shared)) {
        responses["401"] = { $ref: UNAUTHORIZED };
      }
    }
  }
  if (shared !== undefined) {
    document.components = {
      ...document.components,
      responses: { ...document.components?.responses, Unauthorized: shared },
    };
  }
}

const UNAUTHORIZED = "#/components/responses/Unauthorized";

/** Removes the named schemas that nothing refers to (directly or through another schema). */
function dropUnusedSchemas(document: Document, schemas: Record<string, Schema>): void {
  const { schemas: _all, ...rest } = document.components ?? {};
  const used = new Set<string>();
  const visit = (value: unknown): void => {
    if (typeof value !== "object" || value === null) return;
    for (const [key, inner] of Object.entries(value)) {
      if (key === "$ref" && typeof inner === "string" && inner.startsWith(SCHEMAS)) {
        const name = inner.slice(SCHEMAS.length);
        if (!used.has(name)) {
          used.add(name);
          visit(schemas[name]);
        }
      } else visit(inner);
    }
  };
  visit({ paths: document.paths, rest });
  for (const name of Object.keys(schemas)) if (!used.has(name)) delete schemas[name];
}

const SCHEMAS = "#/components/schemas/";
