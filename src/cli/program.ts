import { Command, CommanderError, Option } from "commander";
import { type Config, ConfigError, loadConfig } from "../config.js";
import { DomainError, ValidationError } from "../domain/errors.js";
import { buildApp } from "../http/app.js";
import { DEMO_API_KEY, loadDemo } from "../services/demo.js";
import { loadFixture } from "../services/fixtures.js";
import { createServices } from "../services/index.js";
import { type Database, openDatabase } from "../store/database.js";
import { migrate } from "../store/migrate.js";
import { registerAdminCommands } from "./admin.js";
import type { ExitStatus } from "./exit-status.js";
import { registerExportCommand } from "./export.js";
import { readJson, UsageError } from "./read-json.js";
import { registerSubmitCommand } from "./submit.js";

export type Io = {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: Record<string, string | undefined>;
};

export { UsageError };

/** The `trading-reports` command line: an adapter over the same services as the HTTP API. */
export function buildProgram(io: Io, exit: ExitStatus = { code: 0 }): Command {
  const program = new Command("trading-reports")
    .description("Market-maker trading data reporting service")
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    });

  program
    .command("serve")
    .description("apply migrations and serve the HTTP API")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .addOption(
      new Option("--port <port>", "port to listen on (0: any free port)")
        .default(8080)
        .argParser(parsePort),
    )
    .option("--seed <file>", "load a fixture file before listening")
    .option("--demo", "load the bundled demo data set")
    .action(async (options: { host: string; port: number; seed?: string; demo?: boolean }) => {
      await serve(io, options);
    });

  program
    .command("seed <file>")
    .description("load a fixture file (idempotent)")
    .action(async (file: string) => {
      // Read first: an unreadable file fails at once, without opening (or creating) a database.
      const input = await readJson(file);
      await withDatabase(io, async (database) => {
        const summary = await loadFixture(database.db, input, new Date());
        io.stdout.write(
          `loaded ${file}: ${summary.changed} rows changed, ${summary.eligibilityChanged} reports re-evaluated\n`,
        );
      });
    });

  program
    .command("migrate")
    .description("apply pending migrations and exit")
    .action(async () => {
      await withDatabase(io, async (_database, _config, applied) => {
        io.stdout.write(
          applied.length === 0
            ? "database is up to date\n"
            : applied.map((name) => `applied ${name}\n`).join(""),
        );
      });
    });

  registerAdminCommands(program, io, (work) => withDatabase(io, work));
  registerSubmitCommand(program, io, exit);
  registerExportCommand(program, io, exit);

  return program;
}

/** Runs the program; resolves to the process exit code. */
export async function run(argv: string[], io: Io): Promise<number> {
  const exit: ExitStatus = { code: 0 };
  const program = buildProgram(io, exit);
  try {
    await program.parseAsync(argv, { from: "user" });
    return exit.code;
  } catch (error) {
    return reportFailure(io, error);
  }
}

function reportFailure(io: Io, error: unknown): number {
  if (error instanceof CommanderError) {
    // Help and version requests end with exit code 0 and have printed already.
    return error.exitCode === 0 ? 0 : 2;
  }
  if (error instanceof UsageError || error instanceof ConfigError) {
    io.stderr.write(`error: ${error.message}\n`);
    return 2;
  }
  if (error instanceof ValidationError) {
    // Every problem on a line of its own: a fixture with many is readable, and greppable.
    const lines = error.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message));
    io.stderr.write(
      lines.length === 1
        ? `error: ${lines[0]}\n`
        : `error: ${lines.length} problems\n${lines.map((line) => `  ${line}\n`).join("")}`,
    );
    return 1;
  }
  const message =
    error instanceof DomainError || error instanceof Error ? error.message : String(error);
  io.stderr.write(`error: ${message.split("\n")[0]}\n`);
  return 1;
}

async function openConfigured(
  io: Io,
): Promise<{ config: Config; database: Database; applied: string[] }> {
  const config = loadConfig(io.env);
  const database = await openDatabase(config.database);
  let applied: string[];
  try {
    applied = await migrate(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  return { config, database, applied };
}

/** Opens the configured database (migrated; `applied` names what this run applied). */
export async function withDatabase<T>(
  io: Io,
  work: (database: Database, config: Config, applied: string[]) => Promise<T>,
): Promise<T> {
  const { config, database, applied } = await openConfigured(io);
  try {
    return await work(database, config, applied);
  } finally {
    await database.close();
  }
}

async function serve(
  io: Io,
  options: { host: string; port: number; seed?: string; demo?: boolean },
) {
  const seed = options.seed === undefined ? undefined : await readJson(options.seed);
  const { config, database } = await openConfigured(io);
  const services = createServices(database.db, {
    referenceDataCheckMs: config.referenceDataCheckMs,
  });
  const app = await buildApp({
    services,
    http: config.http,
    logger: { level: config.logLevel, stream: io.stderr },
  });
  try {
    if (seed !== undefined) await loadFixture(database.db, seed, new Date());
    if (options.demo) await loadDemo(database.db, services, new Date());
    await app.listen({ host: options.host, port: options.port });
  } catch (error) {
    await app.close();
    await database.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === "object" && address !== null ? address.port : options.port;
  const base = `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}`;
  io.stdout.write(`listening on ${base}\n`);
  if (options.demo) {
    io.stdout.write(`demo API key: ${DEMO_API_KEY}\n`);
    io.stdout.write(
      `try: curl -s -H 'Authorization: ${DEMO_API_KEY}' '${base}/api/v1/reports?pageSize=2'\n`,
    );
  }
  await new Promise<void>((resolve) => {
    const stop = async () => {
      process.off("SIGTERM", stop);
      process.off("SIGINT", stop);
      await app.close(); // stops accepting, lets requests in flight finish
      await database.close();
      resolve();
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new UsageError(`--port must be an integer from 0 to 65535, got '${value}'`);
  }
  return port;
}
