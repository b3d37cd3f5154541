import { PassThrough } from "node:stream";
import type { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProgram } from "../src/cli/program.js";
import { apiKeyPrefix, generateApiKey, hashApiKey } from "../src/domain/api-key.js";
import { loadFixture } from "../src/services/fixtures.js";
import { type InjectedSession, injectSignIn } from "./helpers/dashboard.js";
import { tableRows } from "./helpers/html-table.js";
import { SCORECARD_KEYS, scorecardWorld, type World } from "./helpers/scorecard-world.js";

let world: World;
let operator: InjectedSession;
let generatedPrefix: string;
beforeAll(async () => {
  world = await scorecardWorld();
  world.setClock(new Date("2025-03-04T13:00:00Z"));
  const { stores } = world.t.database;
  const key = generateApiKey();
  generatedPrefix = apiKeyPrefix(key);
  await stores.organizations.addApiKey({
    organizationId: "globex",
    hash: hashApiKey(key),
    prefix: generatedPrefix,
    label: "trading desk",
  });
  // A market added by a load at a known time, then a sync that changed nothing.
  await loadFixture(
    stores,
    {
      coins: [],
      exchanges: [],
      organizations: [],
      markets: [
        {
          exchangeId: "deribit",
          baseCoinId: "chainlink",
          quoteCoinId: "usd-coin",
          quoteSymbol: "USDC",
          instrumentType: "perp",
          collectedSince: "2025-02-01",
        },
      ],
    },
    new Date("2025-03-04T06:00:00Z"),
  );
  await stores.operator.markSynced(new Date("2025-03-04T06:05:00Z"));
  operator = await injectSignIn(world.t, SCORECARD_KEYS.operator);
});
afterAll(async () => world?.t.close());

describe("the operator's pages", () => {
  it("lists the organizations with their kind and coins", async () => {
    const page = await operator.get("/app/organizations");
    expect(page.statusCode).toBe(200);
    expect(tableRows(page.body, "Organizations (4)")).toEqual([
      "acme | Acme Market Making | market maker | —",
      "chainlink-foundation | Chainlink Foundation | token project | chainlink",
      "globex | Globex Liquidity | market maker | —",
      "platform | Platform | operator | —",
    ]);
  });

  it("lists engagements (ended ones too) and obligation periods", async () => {
    const page = await operator.get("/app/engagements");
    expect(tableRows(page.body, "Engagements (4)")).toEqual([
      "Acme Market Making | aave | prop | 2024-01-01 | 2024-12-31",
      "Acme Market Making | chainlink | project | 2024-01-01 | open-ended",
      "Acme Market Making | uniswap | exchange | 2024-01-01 | open-ended",
      "Globex Liquidity | chainlink | project | 2024-01-01 | open-ended",
    ]);
    const obligations = tableRows(page.body, "Obligation periods (4)");
    expect(obligations[1]).toBe(
      "Acme Market Making | uniswap | 2025-03-01 | 2025-03-03 | binance tether spot | minBidDepth200 5000",
    );
    expect(obligations[3]).toBe(
      "Globex Liquidity | chainlink | 2025-01-01 | open-ended | binance tether spot | minBidDepth200 5000, maxBidAskSpread 0.5, minTopOfBookPercentage 40",
    );
  });

  it("offers every coin it reads reports of as a reports filter, ended engagements' too", async () => {
    const page = await operator.get("/app/reports");
    const coins = [...page.body.matchAll(/<option value="([^"]*)"/g)].map((m) => m[1]);
    expect(coins).toContain("aave");
    const filtered = await operator.get("/app/reports?baseCoinId=aave");
    expect(filtered.statusCode).toBe(200);
  });

  it("lists the keys by prefix, label, last use and revocation, never a secret or hash", async () => {
    const page = await operator.get("/app/keys");
    const rows = tableRows(page.body, "API keys (6, 5 active)");
    // Fixture keys are loaded at the real time; their use follows the service clock.
    // Both acme keys were loaded in one transaction: their order is their random ids'.
    expect(rows).toContainEqual(
      expect.stringMatching(
        /^Acme Market Making \| \(none\) \| fixture \| .+ UTC \| 2025-03-07 09:00 UTC \| no$/,
      ),
    );
    expect(rows).toContainEqual(
      expect.stringMatching(
        /^Acme Market Making \| \(none\) \| fixture \| .+ UTC \| never \| .+ UTC$/,
      ),
    );
    expect(rows).toContainEqual(
      `Globex Liquidity | ${generatedPrefix} | trading desk | ${rows.find((r) => r.includes(generatedPrefix))?.split(" | ")[3]} | never | no`,
    );
    for (const secret of Object.values(SCORECARD_KEYS)) expect(page.body).not.toContain(secret);
    for (const secret of Object.values(SCORECARD_KEYS))
      expect(page.body).not.toContain(hashApiKey(secret));
  });

  it("names the real commands that create and revoke keys", async () => {
    const page = await operator.get("/app/keys");
    const named = [...page.body.matchAll(/<code>trading-reports ([^<&]+)/g)].map((m) =>
      (m[1] ?? "").trim().split(" "),
    );
    expect(named).toEqual([
      ["key", "create"],
      ["key", "revoke"],
    ]);
    const io = { stdout: new PassThrough(), stderr: new PassThrough(), env: {} };
    for (const path of named) {
      let command: Command | undefined = buildProgram(io);
      for (const word of path) command = command?.commands.find((c) => c.name() === word);
      expect(command, path.join(" ")).toBeDefined();
    }
  });

  it("shows when market data last synced and changed, and the exchanges without data", async () => {
    const page = await operator.get("/app/market-data");
    expect(page.body).toMatch(/Last market-data sync<\/dt><dd class="figure">2025-03-04 06:05 UTC/);
    expect(page.body).toMatch(
      /Reference data last changed<\/dt><dd class="figure">2025-03-04 06:00 UTC/,
    );
    expect(page.body).toMatch(/Exchanges without data<\/dt><dd class="figure">1 of 5/);
    expect(tableRows(page.body, "Exchanges")).toEqual([
      "binance | Binance | Yes | 2 | 2024-01-01",
      "binance_futures | Binance (Futures) | Yes | 1 | 2024-06-01",
      "deribit | Deribit | Yes | 1 | 2025-02-01",
      "kraken | Kraken | Yes | 1 | 2024-01-01",
      "nodata | No Data Exchange | No (not collected) | 0 | —",
    ]);
  });
});

describe("access by caller kind", () => {
  it("keeps every operator page from market-maker and project keys (403)", async () => {
    for (const key of [SCORECARD_KEYS.acme, SCORECARD_KEYS.project]) {
      const session = await injectSignIn(world.t, key);
      for (const path of [
        "/app/organizations",
        "/app/engagements",
        "/app/keys",
        "/app/market-data",
      ]) {
        const page = await session.get(path);
        expect(page.statusCode, `${key} ${path}`).toBe(403);
        expect(page.body).not.toContain("Acme Market Making | ");
      }
    }
  });

  it("shows each kind its own navigation, its first page being home", async () => {
    const home = await operator.get("/app");
    expect(home.headers.location).toBe("/app/organizations");
    const nav = (await operator.get("/app/organizations")).body.split("</nav>")[0] ?? "";
    expect([...nav.matchAll(/<a href="([^"]+)"/g)].map((m) => m[1])).toEqual([
      "/app/organizations",
      "/app/engagements",
      "/app/keys",
      "/app/market-data",
      "/app/coins",
      "/app/reports",
    ]);
    const acme = await injectSignIn(world.t, SCORECARD_KEYS.acme);
    expect((await acme.get("/app")).headers.location).toBe("/app/overview");
  });
});
