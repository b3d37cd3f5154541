import type { Server } from "node:http";
import type { Socket } from "node:net";
import { addressBucket } from "./client-address.js";

/**
 * At most `max` open connections per client address: one more is closed at once, before a
 * byte of it is read. Slow clients (that dribble a body, or never read their answer) hold a
 * connection each, so this bounds what one address can hold; the upload and idle timeouts
 * bound for how long.
 */
export function limitConnectionsPerAddress(server: Server, max: number): void {
  const open = new Map<string, number>();
  server.on("connection", (socket: Socket) => {
    const bucket = addressBucket(socket.remoteAddress);
    const count = open.get(bucket) ?? 0;
    if (count >= max) {
      socket.destroy();
      return;
    }
    open.set(bucket, count + 1);
    socket.once("close", () => {
      const left = (open.get(bucket) ?? 1) - 1;
      if (left <= 0) open.delete(bucket);
      else open.set(bucket, left);
    });
  });
}
