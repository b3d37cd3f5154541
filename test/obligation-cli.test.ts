import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliDatabase, cliDatabase } from "./helpers/cli.js";
import { baseFixture } from "./helpers/fixture.js";

let cliDb: CliDatabase;

const cli = (...argv: string[]) => cliDb.cli(...argv);
/** `obligation set` of globex's chainlink period from 2025-01-01 on binance:tether:spot. */
const setGlobexPeriod = (...more: string[]) =>
  cli(
    "obligation",
    "set",
    "globex",
    "chainlink",
    "--since",
    "2025-01-01",
    "--market",
    "binance:tether:spot",
    ...more,
  );

beforeAll(async () => {
  cliDb = await cliDatabase("obligation-cli-");
  expect((await cliDb.seed(baseFixture())).code).toBe(0);
});

afterAll(() => cliDb.close());

describe("obligation commands", () => {
  it("sets a period from options, lists it and ends it", async () => {
    const set = await cli(
      "obligation",
      "set",
      "acme",
      "chainlink",
      "--since",
      "2025-01-01",
      "--market",
      "binance:tether:spot",
      "--market",
      "kraken:USD:spot",
      "--kpi",
      "minBidDepth200=50000",
      "--kpi",
      "maxBidAskSpread=1.5",
    );
    expect(set).toMatchObject({ code: 0 });
    expect(set.out).toBe("obligation for chainlink from 2025-01-01 to open end: 2 markets\n");
    const listed = JSON.parse((await cli("obligation", "list", "--org", "acme", "--json")).out);
    expect(listed).toEqual([
      {
        organizationId: "acme",
        organizationName: "Acme Market Making",
        baseCoinId: "chainlink",
        since: "2025-01-01",
        until: null,
        markets: [
          { exchangeId: "binance", quote: "tether", instrumentType: "spot" },
          { exchangeId: "kraken", quote: "USD", instrumentType: "spot" },
        ],
        kpis: { minBidDepth200: 50000, maxBidAskSpread: 1.5 },
      },
    ]);
    const table = await cli("obligation", "list", "--coin", "chainlink");
    expect(table.out).toContain("binance:tether:spot kraken:USD:spot");
    expect(table.out).toContain("minBidDepth200=50000 maxBidAskSpread=1.5");
    const ended = await cli("obligation", "end", "acme", "chainlink", "--date", "2025-03-31");
    expect(ended).toMatchObject({ code: 0, out: "ended on 2025-03-31\n" });
    const after = JSON.parse((await cli("obligation", "list", "--json")).out);
    expect(after[0].until).toBe("2025-03-31");
  });

  it("sets a period from --file", async () => {
    writeFileSync(
      join(cliDb.dir, "period.json"),
      JSON.stringify({
        since: "2025-04-01",
        markets: [{ exchangeId: "binance_futures", quote: "tether", instrumentType: "perp" }],
        kpis: { minTopOfBookPercentage: 40 },
      }),
    );
    const set = await cli(
      "obligation",
      "set",
      "acme",
      "chainlink",
      "--file",
      join(cliDb.dir, "period.json"),
    );
    expect(set).toMatchObject({ code: 0 });
    const listed = JSON.parse((await cli("obligation", "list", "--org", "acme", "--json")).out);
    expect(listed.map((p: { since: string }) => p.since)).toEqual(["2025-01-01", "2025-04-01"]);
  });

  it("takes a period without kpis from --file, as from options without --kpi", async () => {
    const file = join(cliDb.dir, "no-kpis.json");
    writeFileSync(
      file,
      JSON.stringify({
        since: "2025-06-01",
        markets: [{ exchangeId: "binance", quote: "tether", instrumentType: "spot" }],
      }),
    );
    expect(await cli("obligation", "set", "acme", "uniswap", "--file", file)).toMatchObject({
      code: 0,
    });
    const listed = JSON.parse((await cli("obligation", "list", "--coin", "uniswap", "--json")).out);
    expect(listed).toMatchObject([{ since: "2025-06-01", kpis: {} }]);
  });

  it("refuses a KPI given twice, and thresholds the API refuses, with the API's words", async () => {
    const set = (...kpis: string[]) => setGlobexPeriod(...kpis.flatMap((kpi) => ["--kpi", kpi]));
    const twice = await set("minBidDepth200=1", "minBidDepth200=5");
    expect(twice.code).toBe(2);
    expect(twice.err).toContain("--kpi minBidDepth200 is given twice: give each KPI once");
    for (const value of ["1e309", "-1e309"]) {
      const infinite = await set(`minBidDepth200=${value}`);
      expect(infinite.code, value).toBe(1);
      expect(infinite.err).toContain("kpis.minBidDepth200: Number must be finite");
    }
    for (const value of ["0x10", "Infinity", "1_000", " "]) {
      const text = await set(`minBidDepth200=${value}`);
      expect(text.code, value).toBe(1);
      expect(text.err).toContain("kpis.minBidDepth200: Expected number, received string");
    }
    expect(JSON.parse((await cli("obligation", "list", "--org", "globex", "--json")).out)).toEqual(
      [],
    );
  });

  it("names the bad entry and exits 1; bad usage exits 2", async () => {
    const overlap = await cli(
      "obligation",
      "set",
      "acme",
      "chainlink",
      "--since",
      "2025-02-01",
      "--market",
      "binance:tether:perp",
      "--kpi",
      "minBidDepth200=-5",
    );
    expect(overlap.code).toBe(1);
    expect(overlap.err).toContain("kpis.minBidDepth200: Number must be greater than or equal to 0");
    const market = await cli(
      "obligation",
      "set",
      "acme",
      "chainlink",
      "--since",
      "2026-01-01",
      "--market",
      "binance:tether:perp",
    );
    expect(market.code).toBe(1);
    expect(market.err).toContain("markets.0: exchange 'binance' has no perp markets");
    const unknown = await cli(
      "obligation",
      "set",
      "acme",
      "chainlink",
      "--since",
      "2026-01-01",
      "--market",
      "binance:tether:spot",
      "--kpi",
      "minDepth=5",
    );
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("minDepth");
    expect(
      (await cli("obligation", "set", "acme", "chainlink", "--market", "binance:tether:spot")).code,
    ).toBe(2);
    expect(
      (
        await cli(
          "obligation",
          "set",
          "acme",
          "chainlink",
          "--since",
          "2026-01-01",
          "--market",
          "binance",
        )
      ).code,
    ).toBe(2);
    expect(
      (await cli("obligation", "set", "acme", "chainlink", "--since", "2026-01-01", "--kpi", "x"))
        .code,
    ).toBe(2);
    const both = await cli(
      "obligation",
      "set",
      "acme",
      "chainlink",
      "--since",
      "2026-01-01",
      "--file",
      "p.json",
    );
    expect(both.code).toBe(2);
    expect(
      (await cli("obligation", "set", "acme", "chainlink", "--file", "missing.json")).code,
    ).toBe(2);
    const none = await cli("obligation", "end", "acme", "uniswap", "--date", "2025-01-01");
    expect(none.code).toBe(1);
    expect(none.err).toContain("no obligation period of 'acme' for 'uniswap' holds 2025-01-01");
    expect((await cli("obligation", "end", "acme", "chainlink")).code).toBe(2);
    expect(
      (
        await cli(
          "obligation",
          "set",
          "nobody",
          "chainlink",
          "--since",
          "2026-01-01",
          "--market",
          "binance:tether:spot",
        )
      ).code,
    ).toBe(1);
  });

  it("ends an engagement's open obligation with the engagement", async () => {
    const set = await setGlobexPeriod();
    expect(set).toMatchObject({ code: 0 });
    const end = await cli("engagement", "end", "globex", "chainlink", "--until", "2025-05-31");
    expect(end).toMatchObject({
      code: 0,
      out: "ended on 2025-05-31; 1 obligation period ended with it\n",
    });
    const listed = JSON.parse((await cli("obligation", "list", "--org", "globex", "--json")).out);
    expect(listed.map((p: { until: string | null }) => p.until)).toEqual(["2025-05-31"]);
  });
});
