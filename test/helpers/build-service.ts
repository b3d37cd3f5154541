import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { build } from "esbuild";

const ROOT = new URL("../..", import.meta.url).pathname;

/**
 * Where the tests that spawn the service find it: `node .test-build/main.js …`, as an operator
 * runs the built `dist/main.js`. Node and tsx took about 3 s of CPU to start it from source,
 * plain Node 1 s; the suites start it some hundred times. One folder below the root, as
 * `dist` is, so that the sources' own paths to `migrations/`, `demo/` and `assets/` hold.
 */
export const SERVICE_ENTRY = join(ROOT, ".test-build", "main.js");

/**
 * Vitest global setup: transpiles `src` into `.test-build` (esbuild, as tsx does, under a
 * second). A file is replaced only when its text changed, by a rename, so a suite started
 * beside this one never reads half a file.
 */
export async function setup(): Promise<void> {
  const sources = readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
    .map((file) => join(ROOT, "src", file));
  const result = await build({
    entryPoints: sources,
    outdir: dirname(SERVICE_ENTRY),
    outbase: join(ROOT, "src"),
    format: "esm",
    platform: "node",
    target: "node20",
    write: false,
    logLevel: "error",
  });
  for (const file of result.outputFiles) {
    if (readIfExists(file.path) === file.text) continue;
    mkdirSync(dirname(file.path), { recursive: true });
    const temporary = `${file.path}.${process.pid}.tmp`;
    writeFileSync(temporary, file.contents);
    renameSync(temporary, file.path);
  }
}

function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}
