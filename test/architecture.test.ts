import { describe, expect, it } from "vitest";
import { functionLengths, importsOf, lineCount, sourceFiles } from "./helpers/source-rules.js";

const MAX_FILE_LINES = 250;
const MAX_FUNCTION_LINES = 60;

const files = sourceFiles();
/** Generated code (the client's types) is not written by hand: the size limits do not apply. */
const handWritten = files.filter((file) => !file.endsWith(".generated.ts"));
const imports = files.map((file) => ({ file, imports: importsOf(file) }));

/** The imports of `files` that break a rule, as "file -> import" lines (empty when none). */
function offending(
  applies: (file: string) => boolean,
  forbidden: (imported: string, file: string) => boolean,
): string[] {
  return imports
    .filter(({ file }) => applies(file))
    .flatMap(({ file, imports }) =>
      imports.filter((i) => forbidden(i, file)).map((i) => `${file} -> ${i}`),
    );
}

const SQL_PACKAGES = ["kysely", "pg", "@electric-sql/pglite"];
const under = (dir: string) => (file: string) => file.startsWith(`${dir}/`);
const ROOTS = ["main.ts", "system.ts"];

describe("layers (the import graph of src/)", () => {
  it("finds the files and their imports (the rules below are not vacuous)", () => {
    expect(files).toContain("system.ts");
    expect(imports.find((i) => i.file === "store/stores.ts")?.imports).toContain("kysely");
    expect(imports.find((i) => i.file === "main.ts")?.imports).toContain("cli/program.ts");
  });

  it("services import no kysely and not the table types", () => {
    expect(
      offending(under("services"), (i) => SQL_PACKAGES.includes(i) || i === "store/tables.ts"),
    ).toEqual([]);
  });

  it("only store/ speaks SQL (kysely, pg, PGlite)", () => {
    expect(
      offending(
        (f) => !under("store")(f),
        (i) => SQL_PACKAGES.includes(i),
      ),
    ).toEqual([]);
  });

  it("nothing imports http/ or cli/ but the composition root, main and those folders", () => {
    expect(
      offending(
        (f) => !ROOTS.includes(f),
        (i, f) =>
          (i.startsWith("http/") && !under("http")(f)) ||
          (i.startsWith("cli/") && !under("cli")(f)),
      ),
    ).toEqual([]);
  });

  it("store, services, adapters, domain and schemas do not import the composition root", () => {
    expect(
      offending(
        (f) => !under("cli")(f) && !ROOTS.includes(f),
        (i) => i === "system.ts",
      ),
    ).toEqual([]);
  });

  it("client/ (published as trading-reports/client) imports only client/ and openapi-fetch", () => {
    expect(
      offending(under("client"), (i) => !i.startsWith("client/") && i !== "openapi-fetch"),
    ).toEqual([]);
  });

  it("domain/ is pure: it imports only domain/ and Node's built-ins", () => {
    expect(
      offending(under("domain"), (i) => !i.startsWith("domain/") && !i.startsWith("node:")),
    ).toEqual([]);
  });
});

describe("size", () => {
  it(`no file under src/ is over ${MAX_FILE_LINES} lines`, () => {
    expect(handWritten).toContain("client/index.ts");
    expect(files).toContain("client/api.generated.ts");
    const long = handWritten
      .map((file) => ({ file, lines: lineCount(file) }))
      .filter((f) => f.lines > MAX_FILE_LINES)
      .map((f) => `${f.file}: ${f.lines} lines`);
    expect(long).toEqual([]);
  });

  it(`no function under src/ has over ${MAX_FUNCTION_LINES} lines of its own`, () => {
    const long = handWritten.flatMap((file) =>
      functionLengths(file)
        .filter((f) => f.lines > MAX_FUNCTION_LINES)
        .map((f) => `${file}:${f.line} ${f.name}: ${f.lines} lines`),
    );
    expect(long).toEqual([]);
  });
});
