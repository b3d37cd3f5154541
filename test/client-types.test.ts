import { readFileSync } from "node:fs";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { clientTypes, GENERATED_TYPES } from "../scripts/client-types.js";
import { openApiDocument } from "../src/http/openapi-document.js";

/**
 * The client's types come from the route schemas (through the OpenAPI document), so a renamed
 * field breaks the compile of the code that uses the client: a market maker's program and the
 * CLI's own commands. Here the document is changed as renaming a field in a route's Zod schema
 * would change it, the types are generated from it, and TypeScript compiles against them.
 */

const ROOT = new URL("../", import.meta.url).pathname;
const USAGE = `${ROOT}test/client-usage.virtual.ts`;
const EXPORT_COMMAND = `${ROOT}src/cli/export.ts`;

/** A market maker's program: a typed record, a submission, a listing read back. */
const usage = `
import { createReportsClient, type V2Record } from "../src/client/index.js";

const record: V2Record = {
  date: "2026-08-01", exchangeId: "binance", baseCoinId: "chainlink", quoteCoinId: "tether",
  bidDepthTob: 1, bidDepth10: 1, bidDepth25: 1, bidDepth50: 1, bidDepth100: 1, bidDepth200: 1,
  askDepthTob: 1, askDepth10: 1, askDepth25: 1, askDepth50: 1, askDepth100: 1, askDepth200: 1,
  bidAskDepth50: 2, bidAskDepth100: 2, bidAskDepth200: 2, bidAskSpread: 0.1,
  topOfBookPercentage: 50, orderFillVolumeMaker: 1, orderFillVolumeTaker: 1,
  orderFillVolumeMakerTob: 1, instrumentType: "spot", type: "project",
};

export async function submitAndRead(): Promise<number | undefined> {
  const client = createReportsClient({ url: "http://127.0.0.1:8080", key: "key" });
  await client.POST("/api/v2/report", {
    params: { header: { "x-dry-run": "false", "idempotency-key": "batch-0001" } },
    body: { data: [record] },
  });
  // Paging parameters are whole numbers, given as numbers or as their digits.
  await client.GET("/api/v1/submissions", { params: { query: { page: "2", pageSize: 100 } } });
  const page = await client.GET("/api/v1/reports", {
    params: { query: { baseCoinId: "chainlink", page: 1, pageSize: 500 } },
  });
  return page.data?.items[0]?.bidDepth50;
}
`;

type Json = unknown;

/** The document with field `from` called `to`: in every schema's properties and required list, and every parameter. */
function renamed(document: Json, from: string, to: string): Json {
  if (Array.isArray(document)) return document.map((item) => renamed(item, from, to));
  if (typeof document !== "object" || document === null) return document;
  const entries = Object.entries(document).map(([name, value]): [string, Json] => {
    if (name === "properties" && typeof value === "object" && value !== null) {
      const properties = Object.entries(value).map(([p, v]) => [p === from ? to : p, v]);
      return [name, renamed(Object.fromEntries(properties), from, to)];
    }
    if ((name === "required" && Array.isArray(value)) || name === "name") {
      const rename = (v: Json) => (v === from ? to : v);
      return [name, Array.isArray(value) ? value.map(rename) : rename(value)];
    }
    return [name, renamed(value, from, to)];
  });
  return Object.fromEntries(entries);
}

/** TypeScript's errors for the usage above and the export command, with `generated` as the client's types. */
function compileErrors(generated: string): string[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2023,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: true,
    noEmit: true,
    types: ["node"],
  };
  const host = ts.createCompilerHost(options);
  const virtual = new Map([
    [GENERATED_TYPES, generated],
    [USAGE, usage],
  ]);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (file) => virtual.has(file) || fileExists.call(host, file);
  host.readFile = (file) => virtual.get(file) ?? readFile.call(host, file);
  host.getSourceFile = (file, language, ...rest) => {
    const text = virtual.get(file);
    if (text === undefined) return getSourceFile.call(host, file, language, ...rest);
    return ts.createSourceFile(file, text, language);
  };
  const program = ts.createProgram([USAGE, EXPORT_COMMAND], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const file = diagnostic.file?.fileName.replace(ROOT, "") ?? "";
    return `${file}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, " ")}`;
  });
}

let document: Record<string, unknown>;
beforeAll(async () => {
  document = await openApiDocument();
});

describe("the typed client (trading-reports/client)", () => {
  it("is exported as trading-reports/client: the build's JavaScript and declarations of src/client/index.ts", () => {
    const json = (file: string) => JSON.parse(readFileSync(`${ROOT}${file}`, "utf8"));
    const build = json("tsconfig.build.json").compilerOptions;
    expect(build).toMatchObject({ declaration: true, rootDir: "src", outDir: "dist" });
    expect(json("package.json").exports["./client"]).toEqual({
      types: "./dist/client/index.d.ts",
      default: "./dist/client/index.js",
    });
    expect(json("package.json").dependencies["openapi-fetch"]).toBeDefined();
  });

  it("can be copied into a program as its two files, which import nothing but openapi-fetch (README)", () => {
    const imports = ["index.ts", "api.generated.ts"].flatMap((file) =>
      [...readFileSync(`${ROOT}src/client/${file}`, "utf8").matchAll(/ from "([^"]+)"/g)].map(
        (match) => match[1],
      ),
    );
    expect(new Set(imports)).toEqual(new Set(["openapi-fetch", "./api.generated.js"]));
    const readme = readFileSync(`${ROOT}README.md`, "utf8");
    const section = readme.slice(readme.indexOf("#### Getting the client"));
    for (const step of [
      "src/client/index.ts",
      "src/client/api.generated.ts",
      "npm install openapi-fetch@^0.17",
      "npm pack",
      "npm install /path/to/trading-reports-0.1.0.tgz",
      '"moduleResolution": "node16"',
    ])
      expect(section).toContain(step);
  });

  it("has the types that the route schemas generate now (npm run generate:client)", async () => {
    expect(readFileSync(GENERATED_TYPES, "utf8")).toBe(await clientTypes(document));
  });

  it("compiles a market maker's program and the export command against them", async () => {
    expect(compileErrors(await clientTypes(document))).toEqual([]);
  });

  it("types paging parameters as a number or its digits, leaving the document's strings as they are", async () => {
    const types = await clientTypes(document);
    const reports = (document.paths as Record<string, { get: { parameters: unknown[] } }>)[
      "/api/v1/reports"
    ]?.get.parameters.find((p) => (p as { name: string }).name === "pageSize");
    expect(reports).toMatchObject({ schema: { type: "string", pattern: "^0*[1-9][0-9]*$" } });
    expect(types.match(/pageSize\?: number \| string;/g)).toHaveLength(4);
    expect(types).not.toMatch(/page(Size)?\?: string;/);
  });

  it("stops compiling a program that uses a record field renamed in the route schemas", async () => {
    const types = await clientTypes(renamed(document, "bidDepth50", "bidDepth50Usd") as never);
    expect(types).toContain("bidDepth50Usd: number;");
    const errors = compileErrors(types);
    expect(errors).toContainEqual(expect.stringMatching(/^test\/client-usage.*'bidDepth50'/));
    expect(errors.every((error) => error.startsWith("test/client-usage"))).toBe(true);
  });

  it("stops compiling the export command when a listing filter is renamed", async () => {
    const types = await clientTypes(renamed(document, "baseCoinId", "projectId") as never);
    const errors = compileErrors(types);
    expect(errors).toContainEqual(expect.stringMatching(/^src\/cli\/export\.ts: .*baseCoinId/));
  });
});
