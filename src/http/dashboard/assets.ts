import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { FastifyInstance } from "fastify";

const require = createRequire(import.meta.url);
const own = (name: string) => new URL(`../../../assets/${name}`, import.meta.url);

/**
 * Every file the dashboard serves, by the name it has under `/app/assets/`: our own (in
 * `assets/`) and the libraries' builds from node_modules. Nothing else is reachable (no path
 * from the request ever touches the file system). Add a file: one line here.
 */
const ASSET_FILES: Record<string, URL | string> = {
  "dashboard.css": own("dashboard.css"),
  "dashboard-charts.css": own("dashboard-charts.css"),
  "dashboard-charts.js": own("dashboard-charts.js"),
  "uPlot.min.css": require.resolve("uplot/dist/uPlot.min.css"),
  "uPlot.iife.min.js": require.resolve("uplot/dist/uPlot.iife.min.js"),
};

const CONTENT_TYPES: Record<string, string> = {
  css: "text/css; charset=utf-8",
  js: "text/javascript; charset=utf-8",
};

type Asset = { body: Buffer; type: string; version: string };

let loaded: Map<string, Asset> | undefined;

/** Read once, on first use: a few tens of KB held in memory. */
function assets(): Map<string, Asset> {
  loaded ??= new Map(
    Object.entries(ASSET_FILES).map(([name, file]) => {
      const body = readFileSync(file);
      const type = CONTENT_TYPES[name.split(".").pop() ?? ""] ?? "application/octet-stream";
      const version = createHash("sha256").update(body).digest("base64url").slice(0, 12);
      return [name, { body, type, version }];
    }),
  );
  return loaded;
}

/** The URL of an asset, with its content's hash: a changed file is fetched anew. */
export function assetPath(name: keyof typeof ASSET_FILES): string {
  const asset = assets().get(name);
  if (asset === undefined) throw new Error(`no dashboard asset ${name}`);
  return `/app/assets/${name}?v=${asset.version}`;
}

/** `GET /app/assets/:name` (registered under the /app prefix): cached for a year when asked for by its current version. */
export function assetRoutes(app: FastifyInstance): void {
  app.get<{ Params: { name: string }; Querystring: { v?: string } }>(
    "/assets/:name",
    { schema: { hide: true } },
    async (request, reply) => {
      const asset = assets().get(request.params.name);
      if (asset === undefined) return reply.code(404).type("text/plain").send("Not found");
      const current = request.query.v === asset.version;
      return reply
        .header("cache-control", current ? "public, max-age=31536000, immutable" : "no-cache")
        .header("etag", `"${asset.version}"`)
        .type(asset.type)
        .send(asset.body);
    },
  );
}
