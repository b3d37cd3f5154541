import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJson } from "../src/cli/read-json.js";
import { ValidationError } from "../src/domain/errors.js";
import { openDatabase } from "../src/store/database.js";
import { type CliDatabase, cliDatabase } from "./helpers/cli.js";
import { baseFixture } from "./helpers/fixture.js";

/**
 * A fixture or other JSON input file (`seed`, `serve --seed`, `market-data import`,
 * `obligation set --file`) must be UTF-8, as a request body must: decoding other bytes as
 * UTF-8 replaces each non-ASCII character with U+FFFD, so a Latin-1 `é` would be stored lost.
 */

let cli: CliDatabase;
beforeAll(async () => {
  cli = await cliDatabase("read-json-");
});
afterAll(async () => cli?.close());

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const write = (name: string, bytes: Buffer) => {
  const file = join(cli.dir, name);
  writeFileSync(file, bytes);
  return file;
};
const withSociete = () => {
  const fixture = baseFixture();
  fixture.coins.push({ id: "societe", symbol: "SG", name: "Société Générale" });
  return JSON.stringify(fixture);
};

async function storedCoinNames(): Promise<string[]> {
  const database = await openDatabase(cli.config);
  try {
    const rows = await sql<{ name: string }>`select name from coins where id = 'societe'`.execute(
      database.db,
    );
    return rows.rows.map((r) => r.name);
  } finally {
    await database.close();
  }
}

describe("readJson", () => {
  it("refuses bytes that are not UTF-8 with a validation error naming the file", async () => {
    const file = write("latin1.json", Buffer.from(withSociete(), "latin1"));
    const error = await readJson(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).problems).toEqual([
      { message: `${file} is not valid UTF-8: save it as UTF-8 and load it again` },
    ]);
  });

  it("reads UTF-8 text with its non-ASCII characters intact, with or without a BOM", async () => {
    const plain = write("plain.json", Buffer.from('{"name": "Société"}'));
    const bom = write("bom.json", Buffer.concat([UTF8_BOM, Buffer.from('{"name": "Société"}')]));
    expect(await readJson(plain)).toEqual({ name: "Société" });
    expect(await readJson(bom)).toEqual({ name: "Société" });
  });
});

describe("seed", () => {
  it("loads a fixture saved with a UTF-8 byte order mark", async () => {
    const file = write("bom-fixture.json", Buffer.concat([UTF8_BOM, Buffer.from(withSociete())]));
    const result = await cli.cli("seed", file);
    expect(result).toMatchObject({ code: 0, err: "" });
    expect(await storedCoinNames()).toEqual(["Société Générale"]);
  });

  it("exits 1 with one line naming a Latin-1 file, and stores none of it", async () => {
    const latin1 = withSociete().replace("Société Générale", "Société Général");
    const file = write("latin1-fixture.json", Buffer.from(latin1, "latin1"));
    const result = await cli.cli("seed", file);
    expect(result.code).toBe(1);
    expect(result.err.trim().split("\n")).toEqual([expect.stringContaining(`${file} is not`)]);
    expect(await storedCoinNames()).toEqual(["Société Générale"]);
  });
});
