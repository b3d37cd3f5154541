/** SQLSTATE classes and codes that mean "the database is not there right now". */
const UNAVAILABLE_SQLSTATES = new Set([
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "57014", // query_canceled (statement timeout)
  "53300", // too_many_connections
  "53100", // disk_full (PostgreSQL's, and the embedded disk reserve's: disk-space.ts)
  "53200", // out_of_memory
]);
const UNAVAILABLE_NODE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EHOSTUNREACH",
]);
const UNAVAILABLE_MESSAGES = [
  "Connection terminated",
  "timeout exceeded when trying to connect",
  "Query read timeout",
  "Client has encountered a connection error",
  "connection error",
  "Connection ended",
];

const CONNECTING = Symbol("failed to open a database connection");

/**
 * Rethrows a failure to open a connection marked as the database being unavailable, whatever
 * its SQLSTATE: a database not accepting connections (55000), dropped or renamed (3D000), a
 * login refused after a credential change (28P01) are not there for this request either, and
 * answering them 500 told clients that follow the docs (retry 503s) to give up.
 */
export function failedToConnect(error: unknown): never {
  if (error instanceof Error) Object.assign(error, { [CONNECTING]: true });
  throw error;
}

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if ((error as { [CONNECTING]?: boolean })[CONNECTING] === true) return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    if (
      UNAVAILABLE_SQLSTATES.has(code) ||
      code.startsWith("08") ||
      UNAVAILABLE_NODE_CODES.has(code)
    )
      return true;
  }
  if (UNAVAILABLE_MESSAGES.some((m) => error.message.includes(m))) return true;
  return error.cause !== undefined && isDatabaseUnavailable(error.cause);
}

/**
 * A database that does not answer at start-up, named by where it was looked for and the
 * variable that says so (never the password): `connect ECONNREFUSED 127.0.0.1:5433` alone did
 * not say that the database was the trouble. Any other error is returned as it is.
 */
export function unreachableAtStart(error: unknown, url: string, variable: string): unknown {
  if (!(isDatabaseUnavailable(error) || cannotConnect(error))) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new Error(`cannot reach the database${where(url)} (${variable}): ${reason}`, {
    cause: error,
  });
}

/** " at host:port/name" of a PostgreSQL URL; nothing for one URL cannot read (`u@/db`). */
function where(url: string): string {
  if (!URL.canParse(url)) return "";
  const { hostname, port, pathname, searchParams } = new URL(url);
  const host = decodeURIComponent(hostname) || searchParams.get("host") || "localhost";
  return ` at ${host}${host.startsWith("/") ? "" : `:${port || 5432}`}${pathname}`;
}

/** A socket that could not be opened (any system error), or a login the server refused. */
function cannotConnect(error: unknown): boolean {
  const { syscall, code } = (error ?? {}) as { syscall?: unknown; code?: unknown };
  return syscall !== undefined || (typeof code === "string" && /^(28|3D)/.test(code));
}
