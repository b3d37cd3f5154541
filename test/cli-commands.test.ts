import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProgram } from "../src/cli/program.js";
import { type CliDatabase, cliDatabase } from "./helpers/cli.js";

let cliDb: CliDatabase;
const cli = (...argv: string[]) => cliDb.cli(...argv);

beforeAll(async () => {
  // An empty database (no migrations yet): `migrate` has something to apply.
  cliDb = await cliDatabase("cli-commands-", { migrated: false });
});

afterAll(() => cliDb.close());

describe("migrate", () => {
  it("names the migrations it applied, then says the database is up to date", async () => {
    const migrations = readdirSync(new URL("../migrations/", import.meta.url))
      .filter((f) => f.endsWith(".sql"))
      .sort();
    const first = await cli("migrate");
    expect(first).toMatchObject({ code: 0, err: "" });
    expect(first.out).toBe(migrations.map((m) => `applied ${m}\n`).join(""));
    const again = await cli("migrate");
    expect(again).toMatchObject({ code: 0, out: "database is up to date\n" });
  });
});

describe("CLI exit codes", () => {
  it("returns each command's own code when commands run one after another in one process", async () => {
    const failedSubmit = await cli("submit", join(cliDb.dir, "records.csv"));
    expect(failedSubmit.code).toBe(2);
    const migrated = await cli("migrate");
    expect(migrated.code).toBe(0);
    const badReport = await cli("submit", "--url", "http://127.0.0.1:9", "--key", "k", "x.txt");
    expect(badReport.code).toBe(2);
    expect((await cli("eligibility", "recompute")).code).toBe(0);
    expect(process.exitCode).toBeUndefined();
  });

  it("leaves process.exitCode to main.ts alone", () => {
    const src = new URL("../src/", import.meta.url).pathname;
    const files = readdirSync(src, { recursive: true, encoding: "utf8" }).filter((f) =>
      f.endsWith(".ts"),
    );
    const touching = files.filter((f) =>
      readFileSync(join(src, f), "utf8").includes("process.exitCode"),
    );
    expect(touching).toEqual(["main.ts"]);
  });
});

describe("market-data import", () => {
  it("says it cannot read a missing file and exits 2, like seed", async () => {
    const missing = join(cliDb.dir, "missing.json");
    const imported = await cli("market-data", "import", missing);
    expect(imported).toMatchObject({ code: 2, err: `error: cannot read ${missing}: ENOENT\n` });
    const seeded = await cli("seed", missing);
    expect(seeded).toMatchObject({ code: 2, err: `error: cannot read ${missing}: ENOENT\n` });
  });
});

describe("--help", () => {
  it("describes every subcommand", () => {
    const io = { stdout: new PassThrough(), stderr: new PassThrough(), env: {} };
    const undescribed: string[] = [];
    const walk = (command: Command, path: string[]) => {
      for (const sub of command.commands) {
        const name = [...path, sub.name()];
        if (sub.description().trim() === "") undescribed.push(name.join(" "));
        walk(sub, name);
      }
    };
    const program = buildProgram(io);
    walk(program, []);
    expect(undescribed).toEqual([]);
    expect(program.commands.length).toBeGreaterThan(5);
  });
});
