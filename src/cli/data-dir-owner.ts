import { randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { DataDirError, failure } from "../store/data-dir.js";
import { answer, MAX_CONTROL_CONNECTIONS } from "./control-server.js";

/**
 * One process owns a `DATA_DIR`: PGlite is a single-process database, and two processes on one
 * folder each acknowledge writes that the other one then loses.
 *
 * The lock is a listening unix socket in Linux's abstract namespace, named after the folder's
 * device and inode. The kernel lets one process bind a name and drops it when that process
 * ends however it ends (kill -9 included), so there is no stale lock, no PID to check and no
 * check-then-take race. Abstract names have no permissions, so the lock carries nothing: it
 * drops every connection. (Other platforms use a socket file `.owner.sock` in the folder.)
 *
 * Commands go over `DATA_DIR/.control.sock`, a socket file the owner creates with mode 0600:
 * connecting needs write permission on it, so the kernel lets only the owner's user in, and
 * only a user who may write into DATA_DIR could have created it. A client talks to that path
 * only, and only once it has read the owner's random token from `DATA_DIR/.owner.json` (0600),
 * which every request carries (defence in depth). `key create` and the other operator commands
 * run while `serve` owns the folder are run by the server itself, so they take effect at once.
 */

export type Owner = { pid: number; command: string; since: string };
export type CommandRequest = { argv: string[]; cwd: string; env: Record<string, string> };
export type CommandReply = { code: number; stdout: string; stderr: string };
export type CommandHandler = (request: CommandRequest) => Promise<CommandReply>;

export type Ownership = {
  /** From now on, commands sent by other processes are run by `handler`. */
  accept(handler: CommandHandler): void;
  /** Stops at once: open control connections are cut (a reply in progress is dropped). */
  release(): Promise<void>;
};

export const OWNER_FILE = ".owner.json";
export const CONTROL_SOCKET = ".control.sock";

export function lockAddress(dir: string): string {
  if (process.platform !== "linux") return join(dir, ".owner.sock");
  const { dev, ino } = statSync(dir, { bigint: true });
  return `\0trading-reports/${dev}/${ino}`;
}

/** Takes the folder, or returns undefined when another process owns it. */
export async function acquire(
  dir: string,
  command: string,
  takesCommands: boolean,
): Promise<Ownership | undefined> {
  const owner: Owner = { pid: process.pid, command, since: new Date().toISOString() };
  const token = randomBytes(32).toString("hex");
  const lock = createServer((socket) => socket.destroy());
  const where = lockAddress(dir);
  if (!(await listen(lock, where))) {
    if (where.startsWith("\0") || (await reachable(where))) return undefined;
    rmSync(where, { force: true }); // a socket file left by a process that died
    if (!(await listen(lock, where))) return undefined;
  }
  lock.unref();
  let handler: CommandHandler | undefined;
  const open = new Set<Socket>();
  const control = createServer((socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
    answer(socket, token, owner, takesCommands ? () => handler : () => undefined, takesCommands);
  });
  control.maxConnections = MAX_CONTROL_CONNECTIONS;
  const path = join(dir, CONTROL_SOCKET);
  try {
    writeOwnerFile(join(dir, OWNER_FILE), JSON.stringify({ ...owner, token }));
    // We hold the lock: a socket file here was left by an owner that died.
    rmSync(path, { force: true });
    await listenPrivately(control, path);
    chmodSync(path, 0o600);
  } catch (error) {
    control.close();
    lock.close();
    throw failure(`cannot write to DATA_DIR ${dir}`, error);
  }
  control.unref();
  return {
    accept: (h) => {
      handler = h;
    },
    release: async () => {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => control.close(() => resolve()));
      rmSync(path, { force: true });
      await new Promise<void>((resolve) => lock.close(() => resolve()));
    },
  };
}

/** rm, then create exclusively (never through a planted symlink), then rename into place. */
function writeOwnerFile(file: string, text: string): void {
  const temporary = `${file}.tmp`;
  rmSync(temporary, { force: true });
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;
  const fd = openSync(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  try {
    fchmodSync(fd, 0o600);
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, file); // replaces a link at `file` itself, never its target
}

/** Binds with umask 0177, so the socket file is never connectable by others, not even briefly. */
async function listenPrivately(server: Server, path: string): Promise<void> {
  let previous: number | undefined;
  try {
    previous = process.umask(0o177);
  } catch {
    // worker threads may not change the umask: the chmod that follows still applies
  }
  try {
    const listening = listen(server, path); // binds synchronously
    if (previous !== undefined) process.umask(previous);
    previous = undefined;
    if (!(await listening)) throw new DataDirError(`${path} is in use`);
  } finally {
    if (previous !== undefined) process.umask(previous);
  }
}

function listen(server: Server, where: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off("listening", onListening);
      if (error.code === "EADDRINUSE") resolve(false);
      else reject(failure(`cannot lock DATA_DIR (socket ${where.replace("\0", "@")})`, error));
    };
    const onListening = () => {
      server.off("error", onError);
      resolve(true);
    };
    server.once("error", onError);
    server.once("listening", onListening);
    server.listen(where);
  });
}

function reachable(where: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(where);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Whether some process holds the folder's lock (tested by binding it, never by connecting). */
export async function locked(dir: string): Promise<boolean> {
  const where = lockAddress(dir);
  if (!where.startsWith("\0")) return reachable(where);
  const probe = createServer();
  if (!(await listen(probe, where).catch(() => false))) return true;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return false;
}
