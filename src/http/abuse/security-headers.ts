import type { FastifyInstance } from "fastify";

/**
 * The reference page loads its scripts, styles and the OpenAPI document from this server only
 * (swagger-ui has no inline script); it may not be framed (clickjacking).
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "base-uri 'self'",
  "connect-src 'self'",
  "font-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self' 'unsafe-inline'",
].join("; ");

/** `X-Content-Type-Options: nosniff` on every answer; a CSP and no framing for `/docs`. */
export function securityHeaders(app: FastifyInstance): void {
  app.addHook("onSend", async (request, reply, payload) => {
    reply.header("x-content-type-options", "nosniff");
    const path = request.url.split("?")[0] ?? "";
    if (path === "/docs" || path.startsWith("/docs/")) {
      reply.header("content-security-policy", DOCS_CONTENT_SECURITY_POLICY);
      reply.header("x-frame-options", "DENY");
    }
    return payload;
  });
}

/** Answers with data of an organization must not be kept by browsers or shared caches. */
export function noStore(api: FastifyInstance): void {
  api.addHook("onRequest", async (_request, reply) => {
    reply.header("cache-control", "no-store");
  });
}
