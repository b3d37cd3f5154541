import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadFixture } from "../src/services/fixtures.js";
import { openDatabase } from "../src/store/database.js";
import { migrate } from "../src/store/migrate.js";
import { createStores } from "../src/store/stores.js";
import { type CliDatabase, cliDatabase } from "./helpers/cli.js";
import { baseFixture } from "./helpers/fixture.js";
import { allMetrics, insertObligation, insertReports } from "./helpers/obligations.js";

/** `trading-reports scorecard`: the operator's scorecards on the command line. */
let cliDb: CliDatabase;
const cli = (...argv: string[]) => cliDb.cli(...argv);

const market = { exchangeId: "binance", quote: "tether", instrumentType: "spot" as const };

beforeAll(async () => {
  cliDb = await cliDatabase("scorecard-cli-", { migrated: false });
  const database = await openDatabase(cliDb.config);
  await migrate(database.db);
  await loadFixture(createStores(database.db), baseFixture(), new Date());
  await insertObligation(database.db, {
    organizationId: "acme",
    baseCoinId: "chainlink",
    since: "2026-01-01",
    markets: [market],
    kpis: { minBidDepth200: 5000 },
  });
  const report = (date: string, bidDepth200: number) => ({
    organizationId: "acme",
    baseCoinId: "chainlink",
    date,
    market,
    metrics: { ...allMetrics(6000), bidDepth200 },
    createdAt: new Date(`${date}T23:00:00Z`),
    eligible: true,
  });
  await insertReports(database.db, [report("2026-03-01", 6000), report("2026-03-02", 4000)]);
  await database.close();
});

afterAll(() => cliDb.close());

const RANGE = ["--from", "2026-03-01", "--to", "2026-03-04"];

describe("trading-reports scorecard", () => {
  it("prints a readable table", async () => {
    const { code, out } = await cli("scorecard", ...RANGE);
    expect(code).toBe(0);
    expect(out).toBe(
      [
        "scorecards 2026-03-01 to 2026-03-04: 1 obligation market",
        "ORG   COIN       EXCHANGE  QUOTE   TYPE  DUE  REPORTED  MISSING  LATE  ELIGIBLE  MET  COMPLIANCE",
        "acme  chainlink  binance   tether  spot    4         2        2     0         2    1     25.00 %",
        "",
      ].join("\n"),
    );
  });

  it("prints the API's JSON with --json", async () => {
    const { code, out } = await cli(
      "scorecard",
      ...RANGE,
      "--org",
      "acme",
      "--coin",
      "chainlink",
      "--json",
    );
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual({
      dateGte: "2026-03-01",
      dateLte: "2026-03-04",
      items: [
        {
          organizationId: "acme",
          organizationName: "Acme Market Making",
          baseCoinId: "chainlink",
          ...market,
          daysDue: 4,
          daysReported: 2,
          daysMissing: 2,
          daysLate: 0,
          daysEligible: 2,
          daysMet: 1,
          compliance: 0.25,
          kpis: { minBidDepth200: { daysMet: 1, daysMissed: 1 } },
          daysFlagged: 0,
          medianDepthShare200: { bid: null, ask: null },
        },
      ],
    });
  });

  it("prints CSV with --csv", async () => {
    const { code, out } = await cli("scorecard", ...RANGE, "--csv");
    expect(code).toBe(0);
    expect(out.split("\n")).toEqual([
      "dateGte,dateLte,organizationId,organizationName,baseCoinId,exchangeId,quote,instrumentType,daysDue,daysReported,daysMissing,daysLate,daysEligible,daysMet,compliance,daysFlagged,medianDepthShare200.bid,medianDepthShare200.ask,minBidDepth200.daysMet,minBidDepth200.daysMissed",
      "2026-03-01,2026-03-04,acme,Acme Market Making,chainlink,binance,tether,spot,4,2,2,0,2,1,0.25,0,,,1,1",
      "",
    ]);
  });

  it("prints each market and day with --daily (table, CSV, JSON)", async () => {
    const table = await cli("scorecard", ...RANGE, "--daily");
    expect(table.code).toBe(0);
    expect(table.out).toBe(
      [
        "daily scorecards 2026-03-01 to 2026-03-04: 4 market-days",
        "DATE        ORG   COIN       EXCHANGE  QUOTE   TYPE  STATUS   LATE  FAILED KPIS     ELIGIBILITY",
        "2026-03-01  acme  chainlink  binance   tether  spot  met      -     -               eligible",
        "2026-03-02  acme  chainlink  binance   tether  spot  missed   -     minBidDepth200  eligible",
        "2026-03-03  acme  chainlink  binance   tether  spot  missing  -     -               -",
        "2026-03-04  acme  chainlink  binance   tether  spot  missing  -     -               -",
        "",
      ].join("\n"),
    );
    const csv = await cli("scorecard", ...RANGE, "--daily", "--csv");
    expect(csv.out.split("\n")).toEqual([
      "date,organizationId,organizationName,baseCoinId,exchangeId,quote,instrumentType,status,late,failedKpis,eligibilityStatus",
      "2026-03-01,acme,Acme Market Making,chainlink,binance,tether,spot,met,false,,eligible",
      "2026-03-02,acme,Acme Market Making,chainlink,binance,tether,spot,missed,false,minBidDepth200,eligible",
      "2026-03-03,acme,Acme Market Making,chainlink,binance,tether,spot,missing,false,,",
      "2026-03-04,acme,Acme Market Making,chainlink,binance,tether,spot,missing,false,,",
      "",
    ]);
    const json = JSON.parse((await cli("scorecard", ...RANGE, "--daily", "--json")).out);
    expect(json.items.map((i: { status: string }) => i.status)).toEqual([
      "met",
      "missed",
      "missing",
      "missing",
    ]);
    const none = await cli("scorecard", ...RANGE, "--daily", "--org", "globex");
    expect(none.out).toBe("daily scorecards 2026-03-01 to 2026-03-04: 0 market-days\n");
    const bad = await cli("scorecard", "--daily", "--to", "2026-13-01");
    expect(bad.err).toBe("error: --to: Invalid date, expected YYYY-MM-DD\n");
  });

  it("names the option in an error (exit 1), and refuses --json with --csv (exit 2)", async () => {
    const bad = await cli("scorecard", "--from", "2026-02-30");
    expect(bad.code).toBe(1);
    expect(bad.err).toBe("error: --from: Invalid date, expected YYYY-MM-DD\n");
    const backwards = await cli("scorecard", "--from", "2026-03-05", "--to", "2026-03-01");
    expect(backwards.err).toBe("error: --to: --from (2026-03-05) is after --to (2026-03-01)\n");
    const long = await cli("scorecard", "--from", "2024-01-01", "--to", "2026-01-01");
    expect(long.err).toBe("error: --to: The range from --from to --to must not exceed 366 days\n");
    expect((await cli("scorecard", "--json", "--csv")).code).toBe(2);
  });

  it("an organization without obligations gets an empty scorecard", async () => {
    const { code, out } = await cli("scorecard", ...RANGE, "--org", "globex");
    expect(code).toBe(0);
    expect(out).toBe("scorecards 2026-03-01 to 2026-03-04: 0 obligation markets\n");
  });
});
