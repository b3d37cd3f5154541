import { readFileSync, statSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { DataDirError, describeOsError, failure } from "../store/data-dir.js";
import type { Message } from "./control-server.js";
import {
  CONTROL_SOCKET,
  type CommandReply,
  type CommandRequest,
  lockAddress,
  locked,
  OWNER_FILE,
  type Owner,
} from "./data-dir-owner.js";

/** The client's side of the DATA_DIR control socket (see data-dir-owner.ts). */

/** How long a command waits for a server that is still starting (loading the demo). */
const STARTING_WAIT_MS = 60_000;
/** How long a client waits for a lock holder to open its control socket (it starts in ms). */
const CONTROL_WAIT_MS = 10_000;
/** A live owner answers the first line at once; the command itself may then take minutes. */
const FIRST_ANSWER_MS = 30_000;

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
