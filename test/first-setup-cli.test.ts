import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliDatabase, cliDatabase } from "./helpers/cli.js";

/**
 * The README's operator steps on a new database: without reference data every coin is unknown,
 * and the error says how to load them; after `market-data import demo/reference.json` the
 * same steps work.
 */
let cliDb: CliDatabase;
const cli = (...argv: string[]) => cliDb.cli(...argv);

beforeAll(async () => {
  cliDb = await cliDatabase("first-setup-");
  expect((await cli("migrate")).code).toBe(0);
});
afterAll(() => cliDb.close());

const HINT =
  "no coins are loaded yet (load reference data first: trading-reports market-data sync, or market-data import FILE, such as demo/reference.json)";

describe("first setup on an empty database", () => {
  it("says how to load coins when none is loaded", async () => {
    const project = await cli(
      "org",
      "create",
      "chainlink-labs",
      "Chainlink Labs",
      "--kind",
      "project",
      "--coin",
      "chainlink",
    );
    expect(project.code).toBe(1);
    expect(project.err).toBe(`error: coins.0: unknown coin 'chainlink': ${HINT}\n`);
    expect((await cli("org", "create", "acme", "--name", "Acme Market Making")).code).toBe(0);
    const engagement = await cli(
      "engagement",
      "add",
      "acme",
      "chainlink",
      "--type",
      "project",
      "--since",
      "2026-07-01",
    );
    expect(engagement.err).toBe(`error: baseCoinId: unknown coin 'chainlink': ${HINT}\n`);
  });

  it("works once demo/reference.json is imported; an unknown coin is then just unknown", async () => {
    const imported = await cli("market-data", "import", "demo/reference.json");
    expect(imported.code).toBe(0);
    expect(
      (
        await cli(
          "org",
          "create",
          "chainlink-labs",
          "Chainlink Labs",
          "--kind",
          "project",
          "--coin",
          "chainlink",
        )
      ).code,
    ).toBe(0);
    expect(
      (
        await cli(
          "engagement",
          "add",
          "acme",
          "chainlink",
          "--type",
          "project",
          "--since",
          "2026-07-01",
        )
      ).code,
    ).toBe(0);
    const typo = await cli(
      "engagement",
      "add",
      "acme",
      "chainlnk",
      "--type",
      "project",
      "--since",
      "2026-07-01",
    );
    expect(typo.err).toBe("error: baseCoinId: unknown coin 'chainlnk'\n");
  });
});
