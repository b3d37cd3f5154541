import type { FastifyRequest } from "fastify";

/**
 * How many times the request carried the lower-case header `name`. Node keeps the first of
 * repeated `Authorization` headers and joins repeated unknown ones (`Idempotency-Key`) with
 * ", ": either way a request that sent two would be read as if it had sent one.
 */
export function headerCount(request: FastifyRequest, name: string): number {
  const raw = request.raw.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.toLowerCase() === name) count++;
  return count;
}
