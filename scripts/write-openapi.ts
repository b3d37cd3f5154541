import { mkdir, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { openApiDocument } from "../src/http/openapi-document.js";

/**
 * Writes the OpenAPI document the service serves at /openapi.json to a file (default
 * build/openapi.json), for the linters of `npm run check` and for client generators.
 */
const output = resolve(process.argv[2] ?? "build/openapi.json");
const document = await openApiDocument(process.env);
await mkdir(dirname(output), { recursive: true });
await writeFile(output, `${JSON.stringify(document, null, 2)}\n`);
