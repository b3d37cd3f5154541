import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import {
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { controlRequest } from "../schemas/control.js";
import { DataDirError, describeOsError, failure } from "../store/data-dir.js";

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

type Message =
  | { type: "running" }
  | ({ type: "reply"; owner: Owner } & CommandReply)
  | { type: "refused"; owner: Owner; reason: "token" | "busy" | "starting" | "invalid" };

export type Ownership = {
  /** From now on, commands sent by other processes are run by `handler`. */
  accept(handler: CommandHandler): void;
  /** Stops at once: open control connections are cut (a reply in progress is dropped). */
  release(): Promise<void>;
};

const OWNER_FILE = ".owner.json";
const CONTROL_SOCKET = ".control.sock";
/** A request is one line of JSON; longer (in characters) is cut off. */
const MAX_REQUEST_CHARS = 1024 * 1024;
/** The whole request line must arrive within this, however it trickles in. */
const REQUEST_DEADLINE_MS = 10_000;
const MAX_CONTROL_CONNECTIONS = 8;
/** How long a command waits for a server that is still starting (loading the demo). */
const STARTING_WAIT_MS = 60_000;
/** How long a client waits for a lock holder to open its control socket (it starts in ms). */
const CONTROL_WAIT_MS = 10_000;
/** A live owner answers the first line at once; the command itself may then take minutes. */
const FIRST_ANSWER_MS = 30_000;

function lockAddress(dir: string): string {
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
async function locked(dir: string): Promise<boolean> {
  const where = lockAddress(dir);
  if (!where.startsWith("\0")) return reachable(where);
  const probe = createServer();
  if (!(await listen(probe, where).catch(() => false))) return true;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return false;
}

/** Serves one control connection: garbage of any kind is refused or cut, never thrown. */
function answer(
  socket: Socket,
  token: string,
  owner: Owner,
  handler: () => CommandHandler | undefined,
  takesCommands: boolean,
): void {
  let text = "";
  socket.on("error", () => {});
  socket.setEncoding("utf8"); // a character split between two chunks stays whole
  const deadline = setTimeout(() => socket.destroy(), REQUEST_DEADLINE_MS).unref();
  socket.once("close", () => clearTimeout(deadline));
  const onData = (chunk: string) => {
    text += chunk;
    const end = text.indexOf("\n");
    if (end < 0) {
      if (text.length > MAX_REQUEST_CHARS) socket.destroy();
      return;
    }
    socket.off("data", onData);
    clearTimeout(deadline);
    respond(socket, text.slice(0, end), token, owner, handler(), takesCommands).catch(() =>
      socket.destroy(),
    );
  };
  socket.on("data", onData);
}

async function respond(
  socket: Socket,
  line: string,
  token: string,
  owner: Owner,
  run: CommandHandler | undefined,
  takesCommands: boolean,
): Promise<void> {
  const send = (message: Message): void => {
    socket.end(`${JSON.stringify(message)}\n`);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return send({ type: "refused", owner, reason: "invalid" });
  }
  const request = controlRequest.safeParse(parsed);
  if (!request.success) return send({ type: "refused", owner, reason: "invalid" });
  if (!sameToken(request.data.token, token))
    return send({ type: "refused", owner, reason: "token" });
  if (run === undefined)
    return send({ type: "refused", owner, reason: takesCommands ? "starting" : "busy" });
  const { argv, cwd, env } = request.data;
  if (argv === undefined || cwd === undefined)
    return send({ type: "refused", owner, reason: "invalid" });
  socket.write(`${JSON.stringify({ type: "running" } satisfies Message)}\n`);
  const reply = await run({ argv, cwd, env: env ?? {} }).catch(
    (error: unknown): CommandReply => ({
      code: 1,
      stdout: "",
      stderr: `error: ${error instanceof Error ? error.message : String(error)}\n`,
    }),
  );
  if (!socket.destroyed) send({ type: "reply", owner, ...reply });
}

/** Digests have one length whatever was sent, so the comparison cannot throw. */
function sameToken(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();
  return timingSafeEqual(digest(given), digest(token));
}

/**
 * Sends a command to the process that owns `dir`. Resolves to its reply, or to "gone" when no
 * process owns the folder any more (the caller then takes it). Refusals throw a message
 * naming the folder and the owner. Nothing is sent unless the owner's token could be read.
 */
export async function sendToOwner(
  dir: string,
  request: CommandRequest,
): Promise<CommandReply | "gone"> {
  const file = join(dir, OWNER_FILE);
  const startingDeadline = Date.now() + STARTING_WAIT_MS;
  const controlDeadline = Date.now() + CONTROL_WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    let token: string;
    try {
      token = (JSON.parse(readFileSync(file, "utf8")) as { token: string }).token;
    } catch (error) {
      // Right after kill -9 and a restart the new owner may not have written it yet.
      const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
      if (missing && !(await locked(dir))) return "gone";
      if (missing && Date.now() < controlDeadline) {
        await pause();
        continue;
      }
      throw new DataDirError(
        `DATA_DIR ${dir} is in use by another process (${fileOwner(file)}); this command was not sent to it: cannot read ${file}: ${describeOsError(error)}. Run it as the user that runs that process`,
      );
    }
    const message = await exchange(dir, { ...request, token });
    if (message === undefined) {
      if (!(await locked(dir))) return "gone";
      if (Date.now() < controlDeadline) {
        await pause();
        continue;
      }
      throw unanswered(dir);
    }
    if (message.type === "reply") return message;
    if (message.type !== "refused") throw new DataDirError(`no reply from the owner of ${dir}`);
    const who = `DATA_DIR ${dir} is in use by process ${message.owner.pid} (${message.owner.command}, since ${message.owner.since})`;
    if (message.reason === "busy")
      throw new DataDirError(
        `${who}; only a running 'serve' takes commands: try again when it ends`,
      );
    if (message.reason === "invalid") throw new DataDirError(`${who}, which refused this request`);
    // A token mismatch right after a restart: the new owner has not written its file yet.
    if (message.reason === "token" && attempt >= 5)
      throw new DataDirError(`${who}, which refused this command: wrong token in ${file}`);
    if (message.reason === "starting" && Date.now() > startingDeadline)
      throw new DataDirError(`${who}, still starting after ${STARTING_WAIT_MS / 1000} s`);
    await pause();
  }
}

/** The process that owns `dir`, as it describes itself; undefined when none does. */
export async function whoOwns(dir: string): Promise<Owner | undefined> {
  const deadline = Date.now() + CONTROL_WAIT_MS;
  for (;;) {
    const message = await exchange(dir, {});
    if (message !== undefined && message.type !== "running") return message.owner;
    if (!(await locked(dir))) return undefined;
    if (Date.now() > deadline) throw unanswered(dir);
    await pause();
  }
}

function unanswered(dir: string): DataDirError {
  return new DataDirError(
    `DATA_DIR ${dir} is locked (socket @${lockAddress(dir).slice(1)}) by a process that does not answer on ${join(dir, CONTROL_SOCKET)} within ${CONTROL_WAIT_MS / 1000} s; nothing was sent to it. If no trading-reports process owns the folder, another local user may hold the lock name: find it with 'ss -xlp'`,
  );
}

function fileOwner(file: string): string {
  try {
    return `its owner file belongs to uid ${statSync(file).uid}`;
  } catch {
    return "no owner file";
  }
}

const pause = () => new Promise((resolve) => setTimeout(resolve, 200));

/**
 * One request on the control socket. Undefined when nothing listens there. The first line
 * must come within FIRST_ANSWER_MS (a hung owner); after "running" the wait is the command's.
 */
function exchange(dir: string, request: object): Promise<Message | undefined> {
  return new Promise((resolve, reject) => {
    let text = "";
    let connected = false;
    const socket = connect(join(dir, CONTROL_SOCKET));
    socket.setEncoding("utf8");
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new DataDirError(
          `the owner of DATA_DIR ${dir} did not answer within ${FIRST_ANSWER_MS / 1000} s`,
        ),
      );
    }, FIRST_ANSWER_MS);
    socket.once("connect", () => {
      connected = true;
      socket.write(`${JSON.stringify(request)}\n`);
    });
    socket.on("data", (chunk: string) => {
      clearTimeout(timer);
      text += chunk;
    });
    socket.once("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (!connected && (error.code === "ECONNREFUSED" || error.code === "ENOENT"))
        resolve(undefined);
      else reject(failure(`cannot talk to the owner of DATA_DIR ${dir}`, error));
    });
    socket.once("close", () => {
      clearTimeout(timer);
      if (!connected) return;
      const lines = text.split("\n").filter((line) => line !== "");
      try {
        resolve(JSON.parse(lines[lines.length - 1] ?? "") as Message);
      } catch {
        reject(
          new DataDirError("the owner of the DATA_DIR ended the connection without answering"),
        );
      }
    });
  });
}
