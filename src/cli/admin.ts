import type { Command } from "commander";
import type { AdminServices } from "../services/admin.js";
import type { ObligationsFitted } from "../services/engagements.js";
import type { System } from "../system.js";
import { registerMarketDataCommands } from "./market-data.js";
import { registerObligationCommands } from "./obligation.js";
import { UsageError } from "./read-json.js";
import { textTable } from "./text-table.js";

export type Io = { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream; cwd?: string };
type WithSystem = <T>(work: (system: System) => Promise<T>) => Promise<T>;
type Output = { json?: boolean };
export type Input = { args: string[]; opts: Record<string, string | undefined> };

export type Run = (
  work: (admin: AdminServices, input: Input) => Promise<unknown>,
  print: (result: never) => string,
) => (...actionArgs: unknown[]) => Promise<void>;

export const json = (c: Command) => c.option("--json", "print JSON");

/**
 * Operator commands: organizations, keys, engagements, market data, eligibility and quality.
 * Each one only parses, calls an admin service and prints (`--json` for scripts).
 */
export function registerAdminCommands(program: Command, io: Io, withSystem: WithSystem): void {
  const run: Run =
    (
      work: (admin: AdminServices, input: Input) => Promise<unknown>,
      print: (result: never) => string,
    ) =>
    async (...actionArgs: unknown[]) => {
      // Commander passes the positional arguments, the options, then the command itself.
      const command = actionArgs.at(-1) as Command;
      const input = {
        args: command.args.map(String),
        opts: command.opts() as Record<string, string | undefined> & Output,
      };
      const result = await withSystem((system) => work(system.admin, input));
      io.stdout.write(
        input.opts.json ? `${JSON.stringify(result, null, 2)}\n` : `${print(result as never)}\n`,
      );
    };
  registerOrganizationCommands(program, run);
  registerKeyCommands(program, run);
  registerEngagementCommands(program, run);
  registerObligationCommands(program, io, run);
  registerMarketDataCommands(program, io, run);
  registerEligibilityCommands(program, run);
  registerQualityCommands(program, run);
}

function registerOrganizationCommands(program: Command, run: Run): void {
  const org = program.command("org").description("organizations");
  json(
    org
      .command("create <id> [name]")
      .description(
        "create an organization (id: lower-case letters, digits, - and _): a market maker, a token project (--kind project --coin ID …) or the operator (--kind operator)",
      )
      .option("--name <name>", "display name (or give it after the id)")
      .option("--kind <kind>", "market_maker | project | operator", "market_maker")
      .option("--coin <baseCoinId>", "a coin the project owns (repeat for several)", collect, []),
  ).action(
    run(
      (admin, { args, opts }: Input) => {
        const name = opts.name ?? args[1];
        if (name === undefined) {
          throw new UsageError("give the organization a name (NAME or --name)");
        }
        return admin.createOrganization({
          id: args[0] ?? "",
          name,
          kind: opts.kind as "market_maker",
          coins: opts.coin as unknown as string[],
        });
      },
      (o: { id: string; kind: string; coins: string[] }) =>
        `created ${o.kind.replace("_", " ")} organization ${o.id}${o.coins.length > 0 ? ` (coins: ${o.coins.join(", ")})` : ""}`,
    ),
  );
  json(org.command("list").description("list organizations, with their kind and coins")).action(
    run(
      (admin) => admin.listOrganizations(),
      (rows: { id: string; name: string; kind: string; coins: string[] }[]) =>
        textTable(rows.map((r) => [r.id, r.name, r.kind, r.coins.join(",")])),
    ),
  );
}

const collect = (value: string, previous: string[]) => [...previous, value];

function registerKeyCommands(program: Command, run: Run): void {
  const key = program.command("key").description("API keys");
  json(
    key
      .command("create <organization>")
      .description("create an API key for an organization; the key is printed once")
      .option("--label <label>", "what the key is for", ""),
  ).action(
    run(
      (admin, { args, opts }: Input) => admin.createApiKey(args[0] ?? "", opts.label ?? ""),
      (k: { key: string; id: string; prefix: string }) =>
        `${k.key}\n(shown once: store it now; id ${k.id}, prefix ${k.prefix})`,
    ),
  );
  json(
    key
      .command("list <organization>")
      .description("list an organization's keys (prefix, label, dates; never the key)"),
  ).action(
    run(
      (admin, { args }: Input) => admin.listApiKeys(args[0] ?? ""),
      (
        rows: {
          id: string;
          prefix: string;
          label: string;
          createdAt: Date;
          lastUsedAt: Date | null;
          revokedAt: Date | null;
        }[],
      ) =>
        textTable([
          ["ID", "PREFIX", "LABEL", "CREATED", "LAST USED", "REVOKED"],
          ...rows.map((r) => [
            r.id,
            r.prefix,
            r.label,
            iso(r.createdAt),
            iso(r.lastUsedAt),
            iso(r.revokedAt),
          ]),
        ]),
    ),
  );
  json(
    key
      .command("revoke <organization> <idOrPrefix>")
      .description("revoke an organization's key by id or prefix"),
  ).action(
    run(
      (admin, { args }: Input) => admin.revokeApiKey(args[0] ?? "", args[1] ?? ""),
      (r: { id: string }) => `revoked ${r.id}`,
    ),
  );
}

function registerEngagementCommands(program: Command, run: Run): void {
  const engagement = program
    .command("engagement")
    .description("engagements of organizations with projects");
  json(
    engagement
      .command("add <organization> <baseCoinId>")
      .description("engage an organization for a project (base coin) from --since")
      .requiredOption("--type <type>", "project | exchange | prop")
      .requiredOption("--since <date>", "first day, YYYY-MM-DD")
      .option("--until <date>", "last day, YYYY-MM-DD"),
  ).action(
    run(
      (admin, { args, opts }: Input) =>
        admin.addEngagement(args[0] ?? "", {
          baseCoinId: args[1] ?? "",
          type: opts.type as "project",
          since: opts.since ?? "",
          until: opts.until ?? null,
        }),
      (e: { baseCoinId: string; since: string } & ObligationsFitted) =>
        `engaged for ${e.baseCoinId} since ${e.since}${fittedText(e)}`,
    ),
  );
  json(
    engagement
      .command("end <organization> <baseCoinId>")
      .description("end an organization's open engagement for a project")
      .option("--until <date>", "last day (default today)"),
  ).action(
    run(
      (admin, { args, opts }: Input) =>
        admin.endEngagement(args[0] ?? "", args[1] ?? "", opts.until),
      (r: { until: string } & ObligationsFitted) => `ended on ${r.until}${fittedText(r)}`,
    ),
  );
  json(
    engagement.command("list <organization>").description("list an organization's engagements"),
  ).action(
    run(
      (admin, { args }: Input) => admin.listEngagements(args[0] ?? ""),
      (rows: { baseCoinId: string; type: string; since: string; until: string | null }[]) =>
        textTable([
          ["BASE COIN", "TYPE", "SINCE", "UNTIL"],
          ...rows.map((r) => [r.baseCoinId, r.type, r.since, r.until ?? ""]),
        ]),
    ),
  );
}

function registerEligibilityCommands(program: Command, run: Run): void {
  json(
    program
      .command("eligibility")
      .description("eligibility of stored reports")
      .command("recompute")
      .description("re-evaluate the eligibility of every stored report"),
  ).action(
    run(
      (admin) => admin.recomputeEligibility(),
      (r: { changed: number }) => `${r.changed} reports changed eligibility`,
    ),
  );
}

function registerQualityCommands(program: Command, run: Run): void {
  json(
    program
      .command("quality")
      .description("data-quality flags of stored reports")
      .command("recompute")
      .description(
        "re-evaluate exceeds_public_depth of every stored report against the stored public depth and this command's PUBLIC_DEPTH_TOLERANCE (after changing it; taken along when a server on DATA_DIR runs it)",
      ),
  ).action(
    run(
      (admin) => admin.quality.recomputeFlags(),
      (r: { changed: number }) => `${r.changed} reports changed exceeds_public_depth`,
    ),
  );
}

function iso(value: Date | null): string {
  return value === null ? "" : value.toISOString();
}

/** What an engagement's new end did to its obligation periods, when it did anything. */
function fittedText({ obligationsEnded, obligationsRemoved }: ObligationsFitted): string {
  const periods = (n: number) => `${n} obligation period${n === 1 ? "" : "s"}`;
  const parts = [
    ...(obligationsEnded > 0 ? [`${periods(obligationsEnded)} ended with it`] : []),
    ...(obligationsRemoved > 0
      ? [`${periods(obligationsRemoved)} that started after it removed`]
      : []),
  ];
  return parts.length === 0 ? "" : `; ${parts.join(", ")}`;
}
