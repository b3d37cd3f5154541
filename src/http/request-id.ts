import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";

export const REQUEST_ID_MAX_LENGTH = 100;
const REQUEST_ID = new RegExp(`^[A-Za-z0-9._-]{1,${REQUEST_ID_MAX_LENGTH}}$`);

/** A client may pass its own request id (to follow a request through its logs too). */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers["x-request-id"];
  return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
}
