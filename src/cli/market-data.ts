import { SingleBar } from "cli-progress";
import type { Command } from "commander";
import { type Input, type Io, json, type Run } from "./admin.js";
import { readJson } from "./read-json.js";

/** `market-data import` (a fixture file) and `market-data sync` (CoinGecko). */
export function registerMarketDataCommands(program: Command, io: Io, run: Run): void {
  const marketData = program.command("market-data").description("coins, exchanges and markets");
  json(
    marketData
      .command("import <file>")
      .description(
        "load coins, exchanges and markets from a fixture file (organizations are ignored)",
      ),
  ).action(
    run(
      async (admin, { args }: Input) =>
        admin.importMarketData(await readJson(args[0] ?? "", io.cwd)),
      (s: { changed: number; eligibilityChanged: number }) =>
        `${s.changed} rows changed, ${s.eligibilityChanged} reports re-evaluated`,
    ),
  );
  json(
    marketData
      .command("sync")
      .description(
        "fetch coins, exchanges and markets from CoinGecko (COINGECKO_API_KEY, COINGECKO_BASE_URL)",
      )
      .option("--coins <ids>", "comma-separated coin ids (default: every engaged coin)")
      .option("--exchanges <ids>", "comma-separated exchange ids (default: the known exchanges)")
      .option(
        "--depth-only",
        "only the public depth of the stored spot markets (exchange tickers, depth=true): a cheap daily run",
      ),
  ).action(
    run(async (admin, { opts }) => {
      const bar =
        io.stderr === process.stderr && process.stderr.isTTY
          ? new SingleBar({ format: "{bar} {value}/{total} {label}" })
          : undefined;
      bar?.start(1, 0, { label: "" });
      try {
        const sync = opts.depthOnly ? admin.quality.syncDepthSnapshots : admin.syncMarketData;
        return await sync({
          onRetry: (i) => io.stderr.write(`retry ${i.url} in ${i.delayMs} ms\n`),
          coinIds: listOf(opts.coins),
          exchangeIds: listOf(opts.exchanges),
          onProgress: (done, total, label) => {
            if (bar === undefined) io.stderr.write(`${done}/${total} ${label}\n`);
            else {
              bar.setTotal(total);
              bar.update(done, { label });
            }
          },
        });
      } finally {
        bar?.stop();
      }
    }, syncText),
  );
}

type SyncSummary = {
  coins?: number;
  exchanges: number;
  markets?: number;
  newMarkets?: number;
  snapshots: number;
  flagsChanged: number;
  unknownCoinIds?: string[];
  unknownExchangeIds?: string[];
  warnings: string[];
};

/** The summary line, then a line for each id CoinGecko does not know and each warning. */
function syncText(s: SyncSummary): string {
  const counts = `${s.coins === undefined ? "" : `${s.coins} coins, `}${s.exchanges} exchanges, ${s.markets === undefined ? "" : `${s.markets} markets (${s.newMarkets} new), `}${s.snapshots} depth snapshots (${s.flagsChanged} report flags changed)`;
  const skipped = s.warnings.length > 0 ? `, ${s.warnings.length} warnings` : "";
  const unknown = [
    ...(s.unknownCoinIds ?? []).map((id) => `warning: CoinGecko knows no coin '${id}'`),
    ...(s.unknownExchangeIds ?? []).map((id) => `warning: CoinGecko knows no exchange '${id}'`),
  ];
  return [`${counts}${skipped}`, ...unknown, ...s.warnings.map((w) => `warning: ${w}`)].join("\n");
}

function listOf(value: string | undefined): string[] | undefined {
  return value === undefined
    ? undefined
    : value
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
}
