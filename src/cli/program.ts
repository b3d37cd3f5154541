import { Command, CommanderError, Option } from "commander";
import { ConfigError } from "../config.js";
import { DomainError, ValidationError } from "../domain/errors.js";
import { registerAdminCommands } from "./admin.js";
import type { ExitStatus } from "./exit-status.js";
import { registerExportCommand } from "./export.js";
import { type Context, Forwarded, type Io, withSystem } from "./open.js";
import { readJson, UsageError } from "./read-json.js";
import { registerScorecardCommand } from "./scorecard.js";
import { DemoRefused, serve } from "./serve.js";
import { registerSubmissionLogCommands } from "./submission-log.js";
import { registerSubmitCommand } from "./submit.js";
import { registerWebhookCommands } from "./webhook.js";

export type { Io } from "./open.js";

export { UsageError };

/** The `trading-reports` command line: an adapter over the same services as the HTTP API. */
export function buildProgram(
  io: Io,
  context: Context = { argv: [] },
  exit: ExitStatus = { code: 0 },
): Command {
  const program = new Command("trading-reports")
    .description("Market-maker trading data reporting service")
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    });

  registerServeCommand(program, io, context);
  registerDatabaseCommands(program, io, context);
  registerAdminCommands(program, io, (work) => withSystem(io, context, work));
  registerScorecardCommand(program, io, (work) => withSystem(io, context, work));
  registerWebhookCommands(program, io, (work) => withSystem(io, context, work));
  registerSubmissionLogCommands(program, io, (work) => withSystem(io, context, work));
  registerSubmitCommand(program, io, exit);
  registerExportCommand(program, io, exit);

  return program;
}

function registerServeCommand(program: Command, io: Io, context: Context): void {
  program
    .command("serve")
    .description("apply migrations and serve the HTTP API")
    .addOption(
      new Option("--host <host>", "address to listen on (default: HOST, else 127.0.0.1)").argParser(
        parseHost,
      ),
    )
    .addOption(
      new Option(
        "--port <port>",
        "port to listen on, 0: any free port (default: PORT, else 8080)",
      ).argParser(parsePort),
    )
    .option("--seed <file>", "load a fixture file before listening")
    .option("--demo", "load the bundled demo data set (its API key is published)")
    .option("--force-demo", "load the demo even into PostgreSQL or a database with other data")
    .action(
      async (options: {
        host?: string;
        port?: number;
        seed?: string;
        demo?: boolean;
        forceDemo?: boolean;
      }) => {
        const seed = options.seed === undefined ? undefined : await readJson(options.seed, io.cwd);
        await serve(io, context, { ...options, seed }, (argv, here, shared) =>
          run(argv, here, shared),
        );
      },
    );
}

function registerDatabaseCommands(program: Command, io: Io, context: Context): void {
  program
    .command("seed <file>")
    .description("load a fixture file (idempotent)")
    .action(async (file: string) => {
      // Read first: an unreadable file fails at once, without opening (or creating) a database.
      const input = await readJson(file, io.cwd);
      await withSystem(io, context, async (system) => {
        const summary = await system.admin.loadFixture(input);
        io.stdout.write(
          `loaded ${file}: ${summary.changed} rows changed, ${summary.eligibilityChanged} reports re-evaluated\n`,
        );
      });
    });

  program
    .command("migrate")
    .description("apply pending migrations and exit")
    .action(async () => {
      await withSystem(io, context, async (_system, applied) => {
        io.stdout.write(
          applied.length === 0
            ? "database is up to date\n"
            : applied.map((name) => `applied ${name}\n`).join(""),
        );
      });
    });
}

/** Runs the program; resolves to the process exit code. */
export async function run(argv: string[], io: Io, context: Context = { argv }): Promise<number> {
  const exit: ExitStatus = { code: 0 };
  const program = buildProgram(io, context, exit);
  try {
    await program.parseAsync(argv, { from: "user" });
    return exit.code;
  } catch (error) {
    return reportFailure(io, error);
  }
}

function reportFailure(io: Io, error: unknown): number {
  // Run by the process that owns DATA_DIR, which printed its output here already.
  if (error instanceof Forwarded) return error.code;
  if (error instanceof CommanderError) {
    // Help and version requests end with exit code 0 and have printed already.
    return error.exitCode === 0 ? 0 : 2;
  }
  if (error instanceof UsageError || error instanceof ConfigError || error instanceof DemoRefused) {
    io.stderr.write(`error: ${error.message}\n`);
    return 2;
  }
  if (error instanceof ValidationError) {
    // One line, as every runtime failure's reason is (CONTRACT section 1): each problem
    // names its entry, and "; " parts them.
    const parts = error.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message));
    io.stderr.write(
      parts.length === 1
        ? `error: ${parts[0]}\n`
        : `error: ${parts.length} problems: ${parts.join("; ")}\n`,
    );
    return 1;
  }
  const message =
    error instanceof DomainError || error instanceof Error ? error.message : String(error);
  io.stderr.write(`error: ${message.split("\n")[0]}\n`);
  return 1;
}

function parseHost(value: string): string {
  // Empty, Node would listen on every interface: say which, rather than default to that.
  if (value.trim() === "")
    throw new UsageError("--host must name an address, e.g. 127.0.0.1 (or 0.0.0.0 for all)");
  return value;
}

function parsePort(value: string): number {
  // Decimal digits only: Number() would read '' as 0 (any port) and 0x50 as 80.
  const port = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new UsageError(`--port must be an integer from 0 to 65535, got '${value}'`);
  }
  return port;
}
