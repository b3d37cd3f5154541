import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { marketMakerCaller } from "../src/domain/caller.js";
import { createServices } from "../src/services/index.js";
import { openDatabase } from "../src/store/database.js";
import { createStores } from "../src/store/stores.js";
import { runCli } from "./helpers/cli.js";
import { freshDatabase, onPostgres } from "./helpers/database.js";
import { baseFixture, v2Record } from "./helpers/fixture.js";

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`./fixtures/coingecko/${name}`, import.meta.url), "utf8"));

let coinGecko: Server;
let env: Record<string, string>;
let dir: string;
let cleanup: () => Promise<void> = async () => {};
const seen: { path: string; key: string | undefined }[] = [];

/** Runs the CLI in-process against this file's database. */
const cli = (...argv: string[]) => runCli(env, argv);

async function withServices<T>(
  work: (
    services: ReturnType<typeof createServices>,
    db: Awaited<ReturnType<typeof openDatabase>>,
  ) => Promise<T>,
) {
  const database = await openDatabase(loadConfig(env).database);
  try {
    return await work(
      createServices(createStores(database.db), { referenceDataCheckMs: 0 }),
      database,
    );
  } finally {
    await database.close();
  }
}

beforeAll(async () => {
  const routes: Record<string, unknown> = {
    "/coins/list": fixture("coins-list.json"),
    "/exchanges/list": fixture("exchanges-list.json"),
    "/derivatives/exchanges/list": fixture("derivatives-exchanges-list.json"),
    "/exchanges/binance/tickers": {
      ...fixture("binance-tickers-page-2.json"),
      tickers: [
        fixture("binance-tickers-page-1-ticker.json"),
        ...fixture("binance-tickers-page-2.json").tickers,
      ],
    },
    "/exchanges/kraken/tickers": fixture("kraken-tickers.json"),
    "/derivatives/exchanges/binance_futures": fixture("binance-futures.json"),
  };
  coinGecko = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const path = url.pathname.replace(/^\/api\/v3/, "");
    seen.push({ path, key: req.headers["x-cg-demo-api-key"] as string | undefined });
    const body = routes[path];
    res.writeHead(body === undefined ? 404 : 200, { "content-type": "application/json" });
    res.end(JSON.stringify(body ?? { error: "not found" }));
  });
  await new Promise<void>((resolve) => coinGecko.listen(0, "127.0.0.1", resolve));
  const { port } = coinGecko.address() as AddressInfo;
  dir = mkdtempSync(join(tmpdir(), "market-data-cli-"));
  const common = {
    LOG_LEVEL: "silent",
    COINGECKO_BASE_URL: `http://127.0.0.1:${port}/api/v3`,
    COINGECKO_API_KEY: "cg-demo-key",
  };
  if (onPostgres) {
    const database = await freshDatabase();
    if (database.config.kind !== "postgres") throw new Error("expected PostgreSQL");
    env = { ...common, DATABASE_URL: database.config.url };
    await database.db.destroy().catch(() => {});
    cleanup = () => database.close();
  } else {
    env = { ...common, DATA_DIR: join(dir, "data") };
  }
  writeFileSync(
    join(dir, "fixture.json"),
    JSON.stringify({ ...baseFixture(), organizations: baseFixture().organizations }),
  );
  expect((await cli("seed", join(dir, "fixture.json"))).code).toBe(0);
});

afterAll(async () => {
  await new Promise((resolve) => coinGecko?.close(resolve));
  await cleanup().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

describe("trading-reports market-data sync", () => {
  it("fills markets from CoinGecko and re-evaluates stored reports", async () => {
    await withServices(async (services) => {
      const result = await services.submitReports(marketMakerCaller("acme"), {
        version: 2,
        dryRun: false,
        body: { data: [v2Record({ baseCoinId: "bitcoin", date: "2025-01-15" })] },
      });
      expect(result.createdCount).toBe(1);
    });
    const reasonBefore = await withServices(
      async (_s, database) =>
        (
          await sql<{
            r: string;
          }>`select eligibility_reason as r from reports where base_coin_id = 'bitcoin'`.execute(
            database.db,
          )
        ).rows[0]?.r,
    );
    expect(reasonBefore).toBe("base_not_traded");

    const sync = await cli(
      "market-data",
      "sync",
      "--coins",
      "bitcoin,ethereum",
      "--exchanges",
      "binance,kraken,binance_futures",
      "--json",
    );
    expect(sync.code).toBe(0);
    const summary = JSON.parse(sync.out);
    expect(summary.newMarkets).toBeGreaterThan(0);
    expect(summary.eligibilityChanged).toBe(1);
    expect(seen.every((r) => r.key === "cg-demo-key")).toBe(true);

    await withServices(async (_s, database) => {
      const markets = await sql<{ exchange_id: string; instrument_type: string }>`
        select exchange_id, instrument_type from markets where base_coin_id = 'bitcoin'`.execute(
        database.db,
      );
      expect(
        markets.rows.some((m) => m.exchange_id === "binance" && m.instrument_type === "spot"),
      ).toBe(true);
      // The pair is new, so collection starts today: the January report predates it.
      const reason = await sql<{
        r: string;
      }>`select eligibility_reason as r from reports where base_coin_id = 'bitcoin'`.execute(
        database.db,
      );
      expect(reason.rows[0]?.r).toBe("before_collection_start");
    });

    const again = JSON.parse(
      (
        await cli(
          "market-data",
          "sync",
          "--coins",
          "bitcoin,ethereum",
          "--exchanges",
          "binance,kraken,binance_futures",
          "--json",
        )
      ).out,
    );
    expect(again).toMatchObject({ newMarkets: 0, changed: 0, eligibilityChanged: 0 });
  });

  it("names in its text the ids CoinGecko does not know and the exchanges it skipped", async () => {
    const sync = await cli(
      "market-data",
      "sync",
      "--coins",
      "bitcoin,not-a-coin",
      "--exchanges",
      "kraken,nope",
    );
    expect(sync.code).toBe(0);
    expect(sync.out.trim().split("\n").slice(1)).toEqual([
      "warning: CoinGecko knows no coin 'not-a-coin'",
      "warning: CoinGecko knows no exchange 'nope'",
    ]);
    // binance_futures has perp markets only; nope is no exchange.
    const depth = await cli(
      "market-data",
      "sync",
      "--depth-only",
      "--exchanges",
      "kraken,binance_futures,nope",
    );
    expect(depth.code).toBe(0);
    expect(depth.out.trim().split("\n")).toEqual([
      expect.stringMatching(
        /^1 exchanges, \d+ depth snapshots \(\d+ report flags changed\), 2 warnings$/,
      ),
      "warning: no stored spot market on exchange 'binance_futures'",
      "warning: no stored spot market on exchange 'nope'",
    ]);
  });

  it("fails with exit code 1 and a one-line reason when CoinGecko answers an error", async () => {
    const broken = {
      ...env,
      COINGECKO_BASE_URL: env.COINGECKO_BASE_URL?.replace("/api/v3", "/missing/api/v3") ?? "",
    };
    const saved = env;
    env = broken;
    try {
      const failed = await cli("market-data", "sync", "--coins", "bitcoin");
      expect(failed.code).toBe(1);
      expect(failed.err).toMatch(/^error: CoinGecko request to .* failed with status 404/);
      expect(failed.err).toContain(`${broken.COINGECKO_BASE_URL}/`);
      expect(failed.err.trim().split("\n")).toHaveLength(1);
    } finally {
      env = saved;
    }
  });
});
