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

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
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
