import { randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { DataDirError, describeOsError, failure } from "../store/data-dir.js";

/**
 * One process owns a `DATA_DIR`: PGlite is a single-process database, and two processes on one
 * folder each acknowledge writes that the other one then loses.
 *
 * The lock is a listening unix socket in Linux's abstract namespace, named after the folder's
 * device and inode. The kernel lets one process bind a name and drops it when that process
 * ends however it ends (kill -9 included), so there is no stale lock to take over, no PID to
 * check and no PID-reuse or check-then-take race. The same socket is the owner's command
 * channel: `key create` and the other operator commands, run while `serve` owns the folder,
 * are sent to it and run by the server itself, so they take effect at once.
 *
 * Only the owner of the folder may send commands: a request carries the random token that the
 * owner wrote to `DATA_DIR/.owner.json` (mode 0600). Other platforms (no abstract namespace)
 * use a socket file in the folder; a stale one (connection refused) is replaced, which leaves a
 * small race between two processes starting at the same instant there.
 */

export type Owner = { pid: number; command: string; since: string };
export type CommandRequest = { argv: string[]; cwd: string; env: Record<string, string> };
export type CommandReply = { code: number; stdout: string; stderr: string };
export type CommandHandler = (request: CommandRequest) => Promise<CommandReply>;

type Message =
  | ({ type: "reply"; owner: Owner } & CommandReply)
  | { type: "refused"; owner: Owner; reason: "token" | "busy" | "starting" };

export type Ownership = {
  /** From now on, commands sent by other processes are run by `handler`. */
  accept(handler: CommandHandler): void;
  release(): Promise<void>;
};

const OWNER_FILE = ".owner.json";
const MAX_REQUEST_BYTES = 1024 * 1024;
/** How long a command waits for a server that is still starting (loading the demo). */
const STARTING_WAIT_MS = 60_000;

function address(dir: string): string {
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
  let handler: CommandHandler | undefined;
  const server = createServer((socket) => {
    answer(socket, token, owner, takesCommands ? () => handler : () => undefined, takesCommands);
  });
  const where = address(dir);
  if (!(await listen(server, where))) {
    if (where.startsWith("\0") || (await reachable(where))) return undefined;
    rmSync(where, { force: true }); // a socket file left by a process that died
    if (!(await listen(server, where))) return undefined;
  }
  server.unref();
  try {
    const file = join(dir, OWNER_FILE);
    writeFileSync(`${file}.tmp`, JSON.stringify({ ...owner, token }), { mode: 0o600 });
    chmodSync(`${file}.tmp`, 0o600);
    renameSync(`${file}.tmp`, file);
  } catch (error) {
    server.close();
    throw failure(`cannot write to DATA_DIR ${dir}`, error);
  }
  return {
    accept: (h) => {
      handler = h;
    },
    release: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
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

function answer(
  socket: Socket,
  token: string,
  owner: Owner,
  handler: () => CommandHandler | undefined,
  takesCommands: boolean,
): void {
  let text = "";
  const send = (message: Message) => socket.end(`${JSON.stringify(message)}\n`);
  socket.on("error", () => {});
  socket.setTimeout(10_000, () => socket.destroy());
  socket.on("data", async (chunk: Buffer) => {
    text += chunk.toString("utf8");
    if (text.length > MAX_REQUEST_BYTES) return socket.destroy();
    const end = text.indexOf("\n");
    if (end < 0) return;
    socket.removeAllListeners("data");
    socket.setTimeout(0);
    let request: { token?: unknown } & Partial<CommandRequest>;
    try {
      request = JSON.parse(text.slice(0, end));
    } catch {
      return socket.destroy();
    }
    if (!sameToken(request.token, token)) return send({ type: "refused", owner, reason: "token" });
    const run = handler();
    if (run === undefined)
      return send({ type: "refused", owner, reason: takesCommands ? "starting" : "busy" });
    const reply = await run({
      argv: (request.argv ?? []).map(String),
      cwd: String(request.cwd ?? "/"),
      env: request.env ?? {},
    });
    send({ type: "reply", owner, ...reply });
  });
}

function sameToken(given: unknown, token: string): boolean {
  if (typeof given !== "string" || given.length !== token.length) return false;
  return timingSafeEqual(Buffer.from(given), Buffer.from(token));
}

/**
 * Sends a command to the process that owns `dir`. Resolves to its reply, or to "gone" when no
 * process owns the folder any more (the caller then takes it). Refusals throw a message
 * naming the folder and the owner.
 */
export async function sendToOwner(
  dir: string,
  request: CommandRequest,
): Promise<CommandReply | "gone"> {
  const deadline = Date.now() + STARTING_WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    const file = join(dir, OWNER_FILE);
    let token = "";
    let tokenProblem: string | undefined;
    try {
      token = (JSON.parse(readFileSync(file, "utf8")) as { token: string }).token;
    } catch (error) {
      tokenProblem = `cannot read ${file}: ${describeOsError(error)}`;
    }
    const message = await exchange(address(dir), { ...request, token });
    if (message === undefined) return "gone";
    if (message.type === "reply") return message;
    const who = `DATA_DIR ${dir} is in use by process ${message.owner.pid} (${message.owner.command}, since ${message.owner.since})`;
    if (message.reason === "busy")
      throw new DataDirError(
        `${who}; only a running 'serve' takes commands: try again when it ends`,
      );
    // A token mismatch right after a restart: the new owner has not written its file yet.
    if (message.reason === "token" && attempt >= 5)
      throw new DataDirError(
        `${who}, which refused this command: ${tokenProblem ?? "wrong token"}`,
      );
    if (message.reason === "starting" && Date.now() > deadline)
      throw new DataDirError(`${who}, still starting after ${STARTING_WAIT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The process that owns `dir`, as it describes itself; undefined when none does. */
export async function whoOwns(dir: string): Promise<Owner | undefined> {
  return (await exchange(address(dir), {}))?.owner;
}

function exchange(where: string, request: object): Promise<Message | undefined> {
  return new Promise((resolve, reject) => {
    let text = "";
    let connected = false;
    const socket = connect(where);
    socket.once("connect", () => {
      connected = true;
      socket.write(`${JSON.stringify(request)}\n`);
    });
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
    });
    socket.once("error", (error: NodeJS.ErrnoException) => {
      if (!connected && (error.code === "ECONNREFUSED" || error.code === "ENOENT"))
        resolve(undefined);
      else reject(failure(`lost the connection to the owner of the DATA_DIR`, error));
    });
    socket.once("close", () => {
      if (!connected) return;
      try {
        resolve(JSON.parse(text) as Message);
      } catch {
        reject(
          new DataDirError("the owner of the DATA_DIR ended the connection without answering"),
        );
      }
    });
  });
}
