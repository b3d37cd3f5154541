import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliDatabase, cliDatabase } from "./helpers/cli.js";
import { baseFixture } from "./helpers/fixture.js";

let cliDb: CliDatabase;

/** Runs the CLI in-process against this file's database. */
const cli = (...argv: string[]) => cliDb.cli(...argv);

beforeAll(async () => {
  cliDb = await cliDatabase("admin-cli-");
  expect((await cliDb.seed(baseFixture())).code).toBe(0);
});

afterAll(() => cliDb.close());

describe("operator CLI", () => {
  it("creates and lists organizations, refusing duplicates and bad ids", async () => {
    expect(await cli("org", "create", "initech", "--name", "Initech")).toMatchObject({ code: 0 });
    const list = await cli("org", "list", "--json");
    expect(JSON.parse(list.out).map((o: { id: string }) => o.id)).toEqual([
      "acme",
      "globex",
      "initech",
    ]);
    const duplicate = await cli("org", "create", "initech", "--name", "Again");
    expect(duplicate.code).toBe(1);
    expect(duplicate.err).toContain("already exists");
    expect((await cli("org", "create", "Bad Id!", "--name", "x")).code).toBe(1);
    expect((await cli("org", "create", "noname")).code).toBe(2);
  });

  it("creates a key shown once, lists it by prefix and revokes it", async () => {
    const created = await cli("key", "create", "initech", "--label", "ci", "--json");
    expect(created.code).toBe(0);
    const key = JSON.parse(created.out) as { key: string; prefix: string };
    expect(key.key).toMatch(/^trk_[A-Za-z0-9_-]{43}$/);
    expect(key.key.startsWith(key.prefix)).toBe(true);
    const listed = JSON.parse((await cli("key", "list", "initech", "--json")).out);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ prefix: key.prefix, label: "ci", revokedAt: null });
    expect(JSON.stringify(listed)).not.toContain(key.key);
    expect((await cli("key", "revoke", "initech", key.prefix)).code).toBe(0);
    const after = JSON.parse((await cli("key", "list", "initech", "--json")).out);
    expect(after[0].revokedAt).not.toBeNull();
    expect((await cli("key", "revoke", "initech", key.prefix)).code).toBe(1);
    expect((await cli("key", "create", "nobody")).code).toBe(1);
  });

  it("adds, lists and ends engagements", async () => {
    expect(
      (
        await cli(
          "engagement",
          "add",
          "initech",
          "chainlink",
          "--type",
          "prop",
          "--since",
          "2025-01-01",
        )
      ).code,
    ).toBe(0);
    const listed = JSON.parse((await cli("engagement", "list", "initech", "--json")).out);
    expect(listed).toEqual([
      expect.objectContaining({
        baseCoinId: "chainlink",
        type: "prop",
        since: "2025-01-01",
        until: null,
      }),
    ]);
    expect(
      (await cli("engagement", "end", "initech", "chainlink", "--until", "2025-06-30")).code,
    ).toBe(0);
    const ended = JSON.parse((await cli("engagement", "list", "initech", "--json")).out);
    expect(ended[0].until).toBe("2025-06-30");
    const badType = await cli(
      "engagement",
      "add",
      "initech",
      "chainlink",
      "--type",
      "loan",
      "--since",
      "2025-01-01",
    );
    expect(badType.code).toBe(1);
    expect(badType.err).toContain("Invalid enum value");
    expect(
      (
        await cli(
          "engagement",
          "add",
          "initech",
          "nocoin",
          "--type",
          "prop",
          "--since",
          "2025-01-01",
        )
      ).code,
    ).toBe(1);
  });

  it("refuses an engagement that overlaps another of the organization for the coin", async () => {
    const add = (since: string, until?: string) =>
      cli(
        "engagement",
        "add",
        "globex",
        "uniswap",
        "--type",
        "prop",
        "--since",
        since,
        ...(until === undefined ? [] : ["--until", until]),
      );
    expect((await add("2024-01-01", "2024-06-30")).code).toBe(0);
    const overlapping = await add("2024-06-30");
    expect(overlapping.code).toBe(1);
    expect(overlapping.err).toBe(
      "error: since: overlaps the engagement for 'uniswap' from 2024-01-01 to 2024-06-30 (one engagement per organization and coin on any day; end it first)\n",
    );
    expect((await add("2024-07-01")).code).toBe(0);
    // The same engagement (same since) is updated, not an overlap.
    expect((await add("2024-01-01", "2024-05-31")).code).toBe(0);
    const listed = JSON.parse((await cli("engagement", "list", "globex", "--json")).out);
    expect(listed.filter((e: { baseCoinId: string }) => e.baseCoinId === "uniswap")).toMatchObject([
      { since: "2024-01-01", until: "2024-05-31" },
      { since: "2024-07-01", until: null },
    ]);
  });

  it("imports market data and recomputes eligibility", async () => {
    const file = join(cliDb.dir, "markets.json");
    writeFileSync(
      file,
      JSON.stringify({
        markets: [
          {
            exchangeId: "kraken",
            baseCoinId: "uniswap",
            quoteSymbol: "EUR",
            instrumentType: "spot",
            collectedSince: "2024-01-01",
          },
        ],
      }),
    );
    const imported = await cli("market-data", "import", file, "--json");
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.out).changed).toBe(1);
    expect(JSON.parse((await cli("market-data", "import", file, "--json")).out).changed).toBe(0);
    const recompute = await cli("eligibility", "recompute", "--json");
    expect(recompute.code).toBe(0);
    expect(JSON.parse(recompute.out)).toEqual({ changed: 0 });
  });

  it("imports a whole fixture file, leaving its organizations alone", async () => {
    const file = join(cliDb.dir, "whole-fixture.json");
    const fixture = baseFixture();
    fixture.organizations.push({ id: "umbrella", name: "Umbrella", apiKeys: [], engagements: [] });
    writeFileSync(file, JSON.stringify(fixture));
    expect(await cli("market-data", "import", file)).toMatchObject({ code: 0, err: "" });
    const orgs = JSON.parse((await cli("org", "list", "--json")).out) as { id: string }[];
    expect(orgs.map((o) => o.id)).not.toContain("umbrella");
  });

  it("lists every problem of an import, one per line, and stores nothing", async () => {
    const file = join(cliDb.dir, "bad-markets.json");
    const market = {
      exchangeId: "binance_futures",
      baseCoinId: "aave",
      quoteSymbol: "USDT",
      instrumentType: "spot",
      collectedSince: "2024-01-01",
    };
    writeFileSync(
      file,
      JSON.stringify({
        coins: [{ id: "zcash", symbol: 1, name: "Zcash" }],
        markets: [market, { ...market, exchangeId: "kraken", baseCoinId: "nothing" }],
      }),
    );
    const imported = await cli("market-data", "import", file);
    expect(imported.code).toBe(1);
    // One line (CONTRACT section 1), every problem on it.
    expect(imported.err.split("\n")).toEqual([
      expect.stringMatching(
        /^error: 3 problems: coins\.0\.symbol: [^;]+; markets\.0\.instrumentType: spot market aave\/USDT on exchange 'binance_futures', which does not support it \(spot: false\); markets\.1\.baseCoinId: unknown coin 'nothing'$/,
      ),
      "",
    ]);
  });
});

describe("operator CLI: organization kinds", () => {
  it("creates a project owning coins and an operator, and lists kinds and coins", async () => {
    const project = await cli(
      "org",
      "create",
      "chainlink-labs",
      "Chainlink Labs",
      "--kind",
      "project",
      "--coin",
      "chainlink",
      "--coin",
      "uniswap",
    );
    expect(project).toMatchObject({ code: 0 });
    expect(project.out).toContain("created project organization chainlink-labs");
    const operator = await cli(
      "org",
      "create",
      "platform",
      "--name",
      "Platform",
      "--kind",
      "operator",
      "--json",
    );
    expect(JSON.parse(operator.out)).toEqual({
      id: "platform",
      name: "Platform",
      kind: "operator",
      coins: [],
    });
    const listed = JSON.parse((await cli("org", "list", "--json")).out) as Record<
      string,
      unknown
    >[];
    expect(listed.find((o) => o.id === "chainlink-labs")).toMatchObject({
      kind: "project",
      coins: ["chainlink", "uniswap"],
    });
    expect(listed.find((o) => o.id === "acme")).toMatchObject({ kind: "market_maker", coins: [] });
    const text = (await cli("org", "list")).out;
    expect(text).toMatch(/chainlink-labs\s+Chainlink Labs\s+project\s+chainlink,uniswap/);
    expect(text).toMatch(/platform\s+Platform\s+operator/);
  });

  it("refuses a project without coins, unknown coins, coins of another kind, and engaging a project", async () => {
    const none = await cli("org", "create", "p1", "P1", "--kind", "project");
    expect(none.code).toBe(1);
    expect(none.err).toContain("coins: a project owns at least one base coin");
    const unknown = await cli("org", "create", "p2", "P2", "--kind", "project", "--coin", "nocoin");
    expect(unknown.err).toContain("coins.0: unknown coin 'nocoin'");
    const operator = await cli("org", "create", "p3", "P3", "--kind", "operator", "--coin", "aave");
    expect(operator.err).toContain("only a project owns coins");
    expect((await cli("org", "create", "p4", "P4", "--kind", "dealer")).code).toBe(1);
    const orgs = JSON.parse((await cli("org", "list", "--json")).out) as { id: string }[];
    expect(orgs.map((o) => o.id)).not.toContain("p1");
    const engaged = await cli(
      "engagement",
      "add",
      "chainlink-labs",
      "chainlink",
      "--type",
      "project",
      "--since",
      "2025-01-01",
    );
    expect(engaged.code).toBe(1);
    expect(engaged.err).toContain("only market makers are engaged");
  });
});
