/**
 * `npm run generate:client`: writes the client's types from the OpenAPI document.
 * `--check` (part of `npm run check`): exits 1 when the committed types differ from what the
 * route schemas generate now, so that a renamed field cannot reach the client unnoticed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";
import { openApiDocument } from "../src/http/openapi-document.js";
import { clientTypes, GENERATED_TYPES } from "./client-types.js";

const fresh = await clientTypes(await openApiDocument());
const name = relative(process.cwd(), GENERATED_TYPES);
if (process.argv.includes("--check")) {
  let committed = "";
  try {
    committed = readFileSync(GENERATED_TYPES, "utf8");
  } catch {}
  if (committed !== fresh) {
    process.stderr.write(
      `${name} is stale: the route schemas changed. Run \`npm run generate:client\` and commit it.\n`,
    );
    process.exit(1);
  }
} else {
  writeFileSync(GENERATED_TYPES, fresh);
  process.stdout.write(`wrote ${name}\n`);
}
