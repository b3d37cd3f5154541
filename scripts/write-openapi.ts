import { mkdir, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { loadConfig } from "../src/config.js";
import { buildApp } from "../src/http/app.js";
import type { Services } from "../src/services/index.js";

/**
 * Writes the OpenAPI document the service serves at /openapi.json to a file (default
 * build/openapi.json), for the linters of `npm run check` and for client generators. The
 * document depends on the routes and the configuration (PUBLIC_URL, MAX_PROBLEMS_PER_RESPONSE),
 * never on data: the app is built over services that refuse to be called, without a database
 * (which would take seconds to start).
 */
const noServices = new Proxy({} as Services, {
  get: (_target, name) => () => {
    throw new Error(`write-openapi: the document-only app called services.${String(name)}`);
  },
});

const output = resolve(process.argv[2] ?? "build/openapi.json");
const app = await buildApp({
  services: noServices,
  http: loadConfig(process.env).http,
  logger: false,
});
await app.ready();
await mkdir(dirname(output), { recursive: true });
await writeFile(output, `${JSON.stringify(app.swagger(), null, 2)}\n`);
await app.close();
