import type { Command } from "commander";
import type { ReportCard } from "../schemas/report-card.js";
import { reportCardSchema } from "../schemas/report-card.js";
import type { System } from "../system.js";
import { UsageError } from "./read-json.js";

type Io = { stdout: NodeJS.WritableStream };
type WithSystem = <T>(work: (system: System) => Promise<T>) => Promise<T>;

/**
 * `report-card ORG [--month YYYY-MM] [--json]`: a market maker's report card, computed by the
 * same service as GET /api/v1/report-card. `submissions purge`: the retention of the log.
 */
export function registerSubmissionLogCommands(program: Command, io: Io, withSystem: WithSystem) {
  program
    .command("report-card <org>")
    .description("a market maker's monthly report card (GET /api/v1/report-card)")
    .option("--month <month>", "YYYY-MM (default: the last complete month, UTC)")
    .option("--json", "print the API's JSON answer")
    .action(async (org: string, options: { month?: string; json?: boolean }) => {
      if (options.month !== undefined && !/^[0-9]{4}-(0[1-9]|1[0-2])$/.test(options.month))
        throw new UsageError("--month must be YYYY-MM");
      const card = await withSystem((system) =>
        system.services.operatorReportCard(org, { month: options.month }),
      );
      // Through the answer's schema: its keys in the API's order.
      const json = () => JSON.stringify(reportCardSchema.parse(card), null, 2);
      io.stdout.write(`${options.json ? json() : reportCardText(card)}\n`);
    });

  program
    .command("submissions")
    .description("the submission log")
    .command("purge")
    .description("delete submission log entries older than SUBMISSION_LOG_DAYS (reports stay)")
    .option("--days <n>", "keep this many days instead of SUBMISSION_LOG_DAYS", parseDays)
    .action(async (options: { days?: number }) => {
      const result = await withSystem((system) =>
        system.services.purgeSubmissions(options.days ?? system.config.submissionLogDays),
      );
      io.stdout.write(
        `purged ${result.purged} submission${result.purged === 1 ? "" : "s"} received before ${result.before}\n`,
      );
    });
}

function parseDays(value: string): number {
  if (!/^[0-9]{1,6}$/.test(value)) throw new UsageError("--days must be a whole number of days");
  return Number(value);
}

function reportCardText(card: ReportCard): string {
  const pct = (v: number | null) => (v === null ? "-" : `${(v * 100).toFixed(2)} %`);
  const listed = (counts: Record<string, number>) =>
    Object.entries(counts)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ") || "none";
  const lines = [
    `report card ${card.organizationId} ${card.month}`,
    `submissions ${card.submissions} (rejected ${card.rejectedSubmissions})`,
    `records accepted ${card.recordsAccepted}, rejected ${card.recordsRejected}`,
    `problems by code: ${listed(card.problemsByCode)}`,
    `problems by field: ${listed(card.problemsByField)}`,
    `reports due ${card.reportsDue}, missing ${card.reportsMissing}, late ${card.reportsLate}`,
    `corrections after the deadline ${card.correctionsAfterDeadline}`,
    `quality flags: ${listed(card.qualityFlags)}`,
    "rate                      value    peer median",
    ...Object.entries(card.rates).map(
      ([name, r]) =>
        `${name.padEnd(24)}  ${pct(r.value).padStart(8)}  ${pct(r.peerMedian).padStart(8)}`,
    ),
    card.peers.note ?? `peers: ${card.peers.marketMakers} market makers`,
  ];
  return lines.join("\n");
}
