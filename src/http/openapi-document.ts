import { loadConfig } from "../config.js";
import type { Services } from "../services/index.js";
import { buildApp } from "./app.js";

/**
 * The OpenAPI document the server serves at /openapi.json, built without a database: the
 * routes' declarations make it and no handler runs, so every service refuses to be called.
 * `npm run generate:client` types the client from it; `npm run openapi` writes it for the
 * linters. It depends on the routes and the configuration (PUBLIC_URL,
 * MAX_PROBLEMS_PER_RESPONSE), never on data.
 */
export async function openApiDocument(
  env: Record<string, string | undefined> = {},
): Promise<Record<string, unknown>> {
  const services = new Proxy({} as Services, {
    get: () => () => {
      throw new Error("no service runs while the OpenAPI document is generated");
    },
  });
  const app = await buildApp({ services, http: loadConfig(env).http, logger: false });
  try {
    await app.ready();
    return app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await app.close();
  }
}
