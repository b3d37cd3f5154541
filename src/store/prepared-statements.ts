import { createHash } from "node:crypto";
import pg from "pg";

/**
 * Statements sent as named prepared statements: parsed once per connection instead of once per
 * call; from the sixth call on, PostgreSQL runs the generic plan it keeps whenever a plan made
 * for the call's own arrays would not cost less (for full batches it would not). The batch
 * upsert is a statement of several kilobytes with seven data-modifying parts; parsing and
 * planning it for every batch of 300 cost PostgreSQL 4.1 µs per record, 13 % of what storing
 * the record costs (`npm run bench:ingest-parts`).
 *
 * A name is derived from the text, so every connection that holds a name holds the same
 * statement. Behind a transaction pooler (PgBouncer before 1.21, or without
 * `max_prepared_statements`) a client's next transaction may run on a server connection that
 * lacks the statement, or already has it: the first such failure turns named statements off for
 * the rest of the process, and the failed work is retried unnamed (retry.ts). Nothing of it
 * ran: both errors come before the statement executes.
 */
const names = new Map<string, string>();

/** Marks `text` as one to prepare once per connection (when enabled); returns it unchanged. */
export function prepared(text: string): string {
  names.set(text, `tr_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`);
  return text;
}

/** A named statement the server connection lacks (26000) or already has (42P05). */
export const LOST_STATEMENT_CODES = new Set(["26000", "42P05"]);

export type PreparedStatements = {
  /** Whether named statements are sent now: DB_PREPARED_STATEMENTS, until one is lost. */
  inUse(): boolean;
  /** `listener` hears the loss that turns them off (once per process at most). */
  onLost(listener: (error: unknown) => void): void;
};

/** A pg client class for the pool that sends the `prepared` texts by name while in use. */
export function preparingClient(enabled: boolean): {
  Client: typeof pg.Client;
  statements: PreparedStatements;
} {
  let inUse = enabled;
  const listeners: ((error: unknown) => void)[] = [];
  const lost = (error: unknown) => {
    const code = (error as { code?: unknown } | null)?.code;
    if (!inUse || typeof code !== "string" || !LOST_STATEMENT_CODES.has(code)) return;
    inUse = false;
    for (const listener of listeners) listener(error);
  };
  class PreparingClient extends pg.Client {
    // Kysely's driver calls query(text, values) and awaits the promise.
    // biome-ignore lint/suspicious/noExplicitAny: pg's overloads cannot be overridden one by one.
    override query(...args: any[]): any {
      const [text, values] = args;
      const name = inUse && args.length === 2 && typeof text === "string" && names.get(text);
      if (!name) return (super.query as (...a: unknown[]) => unknown)(...args);
      return super.query({ name, text, values }).catch((error: unknown) => {
        lost(error);
        throw error;
      });
    }
  }
  return {
    Client: PreparingClient,
    statements: { inUse: () => inUse, onLost: (listener) => listeners.push(listener) },
  };
}
