import { type Config, loadConfig } from "../config.js";
import { DataDirError, prepareDataDir } from "../store/data-dir.js";
import type { Database } from "../store/database.js";
import { createSystem, type System } from "../system.js";
import { sendToOwner, whoOwns } from "./control-client.js";
import { acquire, type Ownership } from "./data-dir-owner.js";

export type Io = {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: Record<string, string | undefined>;
  /** Relative file names are read from here (a command sent to the server carries its own). */
  cwd?: string;
};

/**
 * How a program instance reaches its database. `shared` is the running server's own database:
 * a command another process sent to the server runs on it and must not open (or close) one.
 */
export type Context = { argv: string[]; shared?: Database };

/** The command was run by the process that owns DATA_DIR; its output is already printed. */
export class Forwarded extends Error {
  constructor(readonly code: number) {
    super(`forwarded (exit code ${code})`);
  }
}

/**
 * Environment a forwarded command takes with it: the server's own config is used otherwise.
 * `quality recompute` is run after changing PUBLIC_DEPTH_TOLERANCE, with the new value.
 */
const FORWARDED_ENV = /^(COINGECKO_|PUBLIC_DEPTH_TOLERANCE$)/;

export type Opened = {
  config: Config;
  system: System;
  ownership: Ownership | undefined;
  /** The migrations this call applied (none when the server's database is shared). */
  applied: string[];
};

/**
 * Builds the system on the configured database (migrated). On the embedded database in a
 * folder, the folder is taken first (see data-dir-owner.ts). When another process owns it, `serve`
 * fails naming that process, and any other command is sent to it (thrown as `Forwarded`).
 */
export async function openConfigured(io: Io, context: Context, serving: boolean): Promise<Opened> {
  const config = loadConfig(io.env);
  if (context.shared !== undefined) {
    if (serving) throw new DataDirError("this process already serves its DATA_DIR");
    const shared = { ...context.shared, close: async () => {} };
    const system = await createSystem(config, { database: shared });
    return { config, system, ownership: undefined, applied: [] };
  }
  const dataDir = config.database.kind === "pglite" ? config.database.dataDir : undefined;
  const ownership = dataDir === undefined ? undefined : await own(io, context, dataDir, serving);
  let system: System;
  try {
    system = await createSystem(config);
  } catch (error) {
    await ownership?.release();
    throw error;
  }
  const close = system.close;
  system.close = async () => {
    await close();
    await ownership?.release();
  };
  return { config, system, ownership, applied: system.applied };
}

async function own(io: Io, context: Context, dataDir: string, serving: boolean) {
  const dir = prepareDataDir(dataDir);
  const command = ["trading-reports", ...context.argv].join(" ");
  // A few rounds: the owner may end between "the folder is taken" and "send it the command".
  for (let round = 0; round < 5; round++) {
    const ownership = await acquire(dir, command, serving);
    if (ownership !== undefined) return ownership;
    if (serving) {
      const owner = await whoOwns(dir);
      if (owner === undefined) continue;
      throw new DataDirError(
        `DATA_DIR ${dir} is in use by process ${owner.pid} (${owner.command}, since ${owner.since}); one process owns a DATA_DIR: stop it first, or use another DATA_DIR`,
      );
    }
    const env = Object.fromEntries(
      Object.entries(io.env).filter(
        (e): e is [string, string] => FORWARDED_ENV.test(e[0]) && e[1] !== undefined,
      ),
    );
    const reply = await sendToOwner(dir, {
      argv: context.argv,
      cwd: io.cwd ?? process.cwd(),
      env,
    });
    if (reply === "gone") continue;
    io.stdout.write(reply.stdout);
    io.stderr.write(reply.stderr);
    throw new Forwarded(reply.code);
  }
  throw new DataDirError(`DATA_DIR ${dir}: could not take it nor reach its owner`);
}

/** Runs one command's work on the system, closed after it. */
export async function withSystem<T>(
  io: Io,
  context: Context,
  work: (system: System, applied: string[]) => Promise<T>,
): Promise<T> {
  const { system, applied } = await openConfigured(io, context, false);
  try {
    return await work(system, applied);
  } finally {
    await system.close();
  }
}
