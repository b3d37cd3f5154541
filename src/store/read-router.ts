import { type Kysely, sql } from "kysely";
import { within } from "../retry.js";
import { chooseReader, type ReplicaStatus, replicaLagMs } from "./read-choice.js";
import type { Stores } from "./stores.js";
import type { Tables } from "./tables.js";
import { isDatabaseUnavailable } from "./unavailable.js";

/** What `/readyz` says of the read replica (README "Read replica"). */
export type ReplicaReport = {
  status: "in_use" | "lagging" | "unreachable";
  /** Milliseconds behind the primary; null when unreachable or unknown. */
  lagMs: number | null;
};

/**
 * Where reads go. Services pass the caller's `readAfter` (its key's last write) and get the
 * stores to read with; writes always use the primary's stores.
 */
export type ReadRouting = {
  /** Runs `work` on the replica's stores when it may read there, else on the primary's. */
  read<T>(readAfter: string | undefined, work: (stores: Stores) => Promise<T>): Promise<T>;
  /** The stores to read with (for a stream, which is not run again on failure). */
  storesFor(readAfter: string | undefined): Promise<Stores>;
  /** Records that the key has just committed a write (its next reads must see it). */
  wrote(apiKeyId: string): Promise<void>;
  /** The replica's state as last probed (a stale one probed again); undefined without one. */
  replica(): Promise<ReplicaReport | undefined>;
};

/** No replica: every read on the one database. */
export function primaryOnly(stores: Stores): ReadRouting {
  return {
    read: (_readAfter, work) => work(stores),
    storesFor: async () => stores,
    wrote: async () => {},
    replica: async () => undefined,
  };
}

// A read cancelled on a hot standby because recovery needed its rows (SQLSTATE 40001 there).
const RECOVERY_CONFLICT = "40001";

/** How long the first probe of a replica is waited for, and what its silence counts as. */
const FIRST_PROBE_WAIT_MS = 1_000;
const UNANSWERED: ReplicaStatus = { reachable: false };

export function createReadRouter(deps: {
  primary: Kysely<Tables>;
  replica: Kysely<Tables>;
  primaryStores: Stores;
  replicaStores: Stores;
  maxLagMs: number;
  /** How long one probe of the replica is reused before the next (run in the background). */
  statusTtlMs?: number;
}): ReadRouting {
  const ttl = deps.statusTtlMs ?? 200;
  let last: { at: number; status: ReplicaStatus } | undefined;
  let probing: Promise<ReplicaStatus> | undefined;
  const refresh = (): Promise<ReplicaStatus> => {
    probing ??= probeReplica(deps.primary, deps.replica)
      .then((status) => {
        last = { at: Date.now(), status };
        return status;
      })
      .finally(() => {
        probing = undefined;
      });
    return probing;
  };
  // The last probe's answer; a stale one starts the next probe without waiting for it. Before
  // the first answer, a replica that does not answer at once (hung, not refusing) is taken as
  // unreachable for now: neither a read nor /readyz waits out its timeouts.
  const current = async (): Promise<ReplicaStatus> => {
    if (last === undefined) {
      const status = await within(refresh(), FIRST_PROBE_WAIT_MS, () => UNANSWERED);
      last ??= { at: Date.now(), status }; // unanswered: the probe goes on, and updates it
      return status;
    }
    if (Date.now() - last.at >= ttl) refresh().catch(() => {});
    return last.status;
  };
  const storesFor = async (readAfter: string | undefined) => {
    const choice = chooseReader({ status: await current(), maxLagMs: deps.maxLagMs, readAfter });
    return choice.source === "replica" ? deps.replicaStores : deps.primaryStores;
  };
  return {
    storesFor,
    async read(readAfter, work) {
      const stores = await storesFor(readAfter);
      if (stores === deps.primaryStores) return work(stores);
      try {
        return await work(stores);
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (!isDatabaseUnavailable(error) && code !== RECOVERY_CONFLICT) throw error;
        if (code !== RECOVERY_CONFLICT) last = { at: Date.now(), status: { reachable: false } };
        return work(deps.primaryStores);
      }
    },
    async wrote(apiKeyId) {
      // Not flushed before answering: the position is read by other sessions at once, and a
      // crash that loses it loses at worst one read's freshness, never data.
      await sql`update api_keys
        set last_write_lsn = greatest(last_write_lsn, pg_current_wal_insert_lsn())
        from (select set_config('synchronous_commit', 'off', true)) as no_flush
        where id = ${apiKeyId}`.execute(deps.primary);
    },
    async replica() {
      return reportOf(await current(), deps.maxLagMs);
    },
  };
}

function reportOf(status: ReplicaStatus, maxLagMs: number): ReplicaReport {
  if (!status.reachable) return { status: "unreachable", lagMs: null };
  const lagMs = Number.isFinite(status.lagMs) ? Math.round(status.lagMs) : null;
  return { status: status.lagMs > maxLagMs ? "lagging" : "in_use", lagMs };
}

/**
 * The primary's WAL position first, then how far the replica has replayed: read in this
 * order, a replica that keeps up is never seen behind. A server that is not replaying (the
 * primary itself as DATABASE_READ_URL) reports its own position: after a crash recovery a
 * primary's `pg_last_wal_replay_lsn()` stays where the recovery ended, forever behind.
 */
async function probeReplica(
  primary: Kysely<Tables>,
  replica: Kysely<Tables>,
): Promise<ReplicaStatus> {
  const head = await sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(
    primary,
  );
  try {
    const r = await sql<{ replay: string; since: number | null }>`
      select case when pg_is_in_recovery() then pg_last_wal_replay_lsn()
          else pg_current_wal_lsn() end::text as replay,
        case when pg_is_in_recovery() then
          (extract(epoch from clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000)::float8
        end as since`.execute(replica);
    const row = r.rows[0];
    if (row === undefined) return { reachable: false };
    const lagMs = replicaLagMs({
      primaryLsn: head.rows[0]?.lsn ?? row.replay,
      replayLsn: row.replay,
      msSinceLastReplay: row.since,
    });
    return { reachable: true, replayLsn: row.replay, lagMs };
  } catch {
    return { reachable: false };
  }
}
