import type { Command } from "commander";
import type { StoredObligation } from "../store/obligation-store.js";
import { type Input, type Io, json, type Run } from "./admin.js";
import { readJson, UsageError } from "./read-json.js";
import { textTable } from "./text-table.js";

const collect = (value: string, previous: string[]) => [...previous, value];

/** `obligation set|list|end`: what a market maker owes for a coin (CONTRACT section 4). */
export function registerObligationCommands(program: Command, io: Io, run: Run): void {
  const obligation = program
    .command("obligation")
    .description("obligations of market makers: markets to report and KPIs to meet");
  json(
    obligation
      .command("set <organization> <baseCoinId>")
      .description("create the period starting on --since, or replace its end, markets and KPIs")
      .option("--since <date>", "first day, YYYY-MM-DD")
      .option("--until <date>", "last day, YYYY-MM-DD (default: open-ended)")
      .option(
        "--market <market>",
        "EXCHANGE:QUOTE:TYPE, e.g. binance:tether:spot (repeat)",
        collect,
        [],
      )
      .option("--kpi <kpi>", "NAME=VALUE, e.g. minBidDepth200=50000 (repeat)", collect, [])
      .option("--file <file>", "the period as JSON instead of the options above"),
  ).action(
    run(
      async (admin, { args, opts }: Input) =>
        admin.obligations.set(args[0] ?? "", args[1] ?? "", await periodOf(opts, io)),
      (p: { baseCoinId: string; since: string; until: string | null; markets: unknown[] }) =>
        `obligation for ${p.baseCoinId} from ${p.since} to ${p.until ?? "open end"}: ${p.markets.length} markets`,
    ),
  );
  json(
    obligation
      .command("list")
      .description("list obligation periods")
      .option("--org <organization>", "only this organization")
      .option("--coin <baseCoinId>", "only this base coin"),
  ).action(
    run(
      (admin, { opts }: Input) =>
        admin.obligations.list({ organizationId: opts.org, baseCoinId: opts.coin }),
      (rows: StoredObligation[]) => obligationTable(rows),
    ),
  );
  json(
    obligation
      .command("end <organization> <baseCoinId>")
      .description("end the period holding --date on that day")
      .requiredOption("--date <date>", "last day of the period, YYYY-MM-DD"),
  ).action(
    run(
      (admin, { args, opts }: Input) =>
        admin.obligations.end(args[0] ?? "", args[1] ?? "", opts.date ?? ""),
      (r: { until: string }) => `ended on ${r.until}`,
    ),
  );
}

/** The period from --file, or from --since, --until, --market and --kpi. */
async function periodOf(opts: Input["opts"], io: Io): Promise<unknown> {
  const markets = opts.market as unknown as string[];
  const kpis = opts.kpi as unknown as string[];
  if (opts.file !== undefined) {
    if (opts.since !== undefined || opts.until !== undefined || markets.length + kpis.length > 0)
      throw new UsageError(
        "--file replaces --since, --until, --market and --kpi: give one or the other",
      );
    return readJson(opts.file, io.cwd);
  }
  if (opts.since === undefined) throw new UsageError("--since (or --file) is required");
  return {
    since: opts.since,
    until: opts.until ?? null,
    markets: markets.map(marketOf),
    kpis: kpisOf(kpis),
  };
}

/** The --kpi options as the schema's object; a KPI given twice is refused, not overwritten. */
function kpisOf(options: readonly string[]): Record<string, unknown> {
  const kpis = new Map<string, unknown>();
  for (const [name, value] of options.map(kpiOf)) {
    if (kpis.has(name)) throw new UsageError(`--kpi ${name} is given twice: give each KPI once`);
    kpis.set(name, value);
  }
  return Object.fromEntries(kpis);
}

function marketOf(text: string) {
  const parts = text.split(":");
  const [exchangeId, quote, instrumentType] = parts;
  if (parts.length !== 3 || !exchangeId || !quote || !instrumentType)
    throw new UsageError(
      `--market '${text}': expected EXCHANGE:QUOTE:TYPE, e.g. binance:tether:spot`,
    );
  return { exchangeId, quote, instrumentType };
}

/** A number as JSON writes it: what --file and the submission API take. */
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * NAME=VALUE; a value written as a JSON number is that number (1e309 is Infinity, which the
 * schema refuses as the API does), anything else is passed on as text, for the schema to name.
 */
function kpiOf(text: string): [string, unknown] {
  const at = text.indexOf("=");
  if (at <= 0)
    throw new UsageError(`--kpi '${text}': expected NAME=VALUE, e.g. minBidDepth200=50000`);
  const value = text.slice(at + 1).trim();
  return [text.slice(0, at), JSON_NUMBER.test(value) ? Number(value) : value];
}

function obligationTable(rows: StoredObligation[]): string {
  const lines = [["ORGANIZATION", "BASE COIN", "SINCE", "UNTIL", "MARKETS", "KPIS"]];
  for (const r of rows) {
    lines.push([
      r.organizationId,
      r.baseCoinId,
      r.since,
      r.until ?? "",
      r.markets.map((m) => `${m.exchangeId}:${m.quote}:${m.instrumentType}`).join(" "),
      Object.entries(r.kpis)
        .map(([k, v]) => `${k}=${v}`)
        .join(" "),
    ]);
  }
  return textTable(lines);
}
