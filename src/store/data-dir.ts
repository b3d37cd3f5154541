import {
  accessSync,
  chmodSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  statSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";

/**
 * The embedded database's folder could not be used. The message names the folder, what was
 * tried and the operating system's answer, so that a start-up failure says why at once.
 */
export class DataDirError extends Error {}

const MAX_DEPTH = 64;

/**
 * Creates `DATA_DIR` if needed and checks that this process may read and write it, before
 * PGlite touches it (PGlite reports such failures as `[object Object]` or "failed to
 * initialize"). Returns the absolute path.
 *
 * Node's `mkdirSync(…, { recursive: true })` spins forever on some pseudo file systems
 * (`/proc/x`: mkdir says ENOENT although the parent exists), so parents are created here,
 * one level at a time, with a bounded depth.
 */
export function prepareDataDir(dataDir: string): string {
  const path = resolve(dataDir);
  makeDirectory(path, 0);
  let isDirectory: boolean;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch (error) {
    throw failure(`cannot read DATA_DIR ${path}`, error);
  }
  if (!isDirectory) throw new DataDirError(`DATA_DIR ${path} is not a directory`);
  try {
    accessSync(path, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (error) {
    throw failure(`DATA_DIR ${path} is not readable and writable by this process`, error);
  }
  refuseForeignFiles(path);
  return path;
}

/**
 * A folder that holds no database yet must hold nothing else either, as PostgreSQL's `initdb`
 * requires: a mistyped DATA_DIR (a home folder) would get a database's files strewn among its
 * own, and start on an empty database. Dot files (the owner's, a volume's) and `lost+found`
 * pass; so do a cluster's own names, left by a first start that was stopped halfway.
 */
function refuseForeignFiles(path: string): void {
  if (existsSync(join(path, "PG_VERSION"))) return;
  const foreign = readdirSync(path).filter((name) => !CLUSTER_NAME.test(name));
  if (foreign.length === 0) return;
  const named = foreign.slice(0, 3).join(", ") + (foreign.length > 3 ? ", …" : "");
  throw new DataDirError(
    `DATA_DIR ${path} holds files that are not an embedded database (${named}): use an empty folder or a new path`,
  );
}

const CLUSTER_NAME =
  /^(\.|lost\+found$|pg_|PG_VERSION$|base$|global$|postmaster\.|postgresql.*\.conf$)/;

/**
 * Keeps the embedded database's files to this process's user, as PostgreSQL keeps its own
 * (0600 files, 0700 folders): PGlite writes the files of a new cluster world-writable (0666),
 * so that in a `DATA_DIR` made beforehand with 0755 (a container volume, `install -d`) any
 * local user could rewrite reports or plant an API key's hash. `DATA_DIR` itself loses write
 * for others and its group (a folder they may write lets them replace its files); what else
 * its mode allows is the operator's. Run at every start: a few thousand files, milliseconds.
 */
export function keepPrivate(path: string): void {
  const mode = statSync(path).mode & 0o777;
  if (mode & 0o022) tryChmod(path, mode & ~0o022);
  for (const entry of readdirSync(path, { recursive: true, encoding: "utf8" })) {
    const file = join(path, entry);
    const stats = lstatSync(file, { throwIfNoEntry: false });
    if (stats === undefined || stats.isSymbolicLink() || (stats.mode & 0o077) === 0) continue;
    tryChmod(file, stats.mode & 0o700);
  }
}

/** A file another user owns keeps its mode: the database still works, and start-up goes on. */
function tryChmod(path: string, mode: number): void {
  try {
    chmodSync(path, mode);
  } catch {}
}

function makeDirectory(path: string, depth: number): void {
  try {
    mkdirSync(path, { mode: 0o700 });
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return;
    const parent = dirname(path);
    // ENOENT while the parent exists: a file system that refuses the name (/proc).
    if (code !== "ENOENT" || parent === path || depth >= MAX_DEPTH || exists(parent)) {
      throw failure(`cannot create DATA_DIR ${path}`, error);
    }
  }
  makeDirectory(dirname(path), depth + 1);
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST")
      throw failure(`cannot create DATA_DIR ${path}`, error);
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** "what: CODE (the OS's words)", from a Node file-system error. */
export function failure(what: string, error: unknown): DataDirError {
  return new DataDirError(`${what}: ${describeOsError(error)}`, { cause: error });
}

export function describeOsError(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  if (typeof e?.code === "string") {
    // Node's message is "CODE: words, syscall 'path'"; keep the words.
    const words = /^[A-Z0-9_]+: ([^,]+)/.exec(e.message ?? "")?.[1];
    return words === undefined ? e.code : `${e.code} (${words})`;
  }
  if (error instanceof Error) return error.message;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}
