import { createHash, timingSafeEqual } from "node:crypto";
import type { Socket } from "node:net";
import { controlRequest } from "../schemas/control.js";
import type { CommandHandler, CommandReply, Owner } from "./data-dir-owner.js";

/** The server's side of the DATA_DIR control socket (see data-dir-owner.ts). */

/** What the owner answers, one JSON line each: "running" first, then the reply or a refusal. */
export type Message =
  | { type: "running" }
  | ({ type: "reply"; owner: Owner } & CommandReply)
  | { type: "refused"; owner: Owner; reason: "token" | "busy" | "starting" | "invalid" };

/** A request is one line of JSON; longer (in characters) is cut off. */
const MAX_REQUEST_CHARS = 1024 * 1024;
/** The whole request line must arrive within this, however it trickles in. */
const REQUEST_DEADLINE_MS = 10_000;
export const MAX_CONTROL_CONNECTIONS = 8;

/** Serves one control connection: garbage of any kind is refused or cut, never thrown. */
export function answer(
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
