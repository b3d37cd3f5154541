/**
 * Which server a read goes to when a read replica is configured (README "Read replica"): pure
 * rules over what the last probe of the replica said, so they are tested without servers.
 */

/** What one probe of the replica found. */
export type ReplicaStatus =
  | { reachable: false }
  | {
      reachable: true;
      /** `pg_last_wal_replay_lsn()`: how far the replica has replayed the primary's WAL. */
      replayLsn: string;
      /** 0 when it has replayed all the primary had written; else the age of its last replay. */
      lagMs: number;
    };

export type ReadChoice = {
  source: "replica" | "primary";
  /** Why the primary: `unreachable` and `lagging` hold for every key; `own-write` for one. */
  reason?: "not-configured" | "unreachable" | "lagging" | "own-write";
};

/** A WAL position `X/Y` (two hex numbers) as one comparable number. */
export function lsnValue(lsn: string): bigint {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(lsn);
  if (match === null) throw new Error(`not a WAL position: ${lsn}`);
  return (BigInt(`0x${match[1]}`) << 32n) + BigInt(`0x${match[2]}`);
}

/**
 * The replica, unless it is unknown or unreachable, lags past `maxLagMs`, or has not yet
 * replayed the caller's own last write (`readAfter`): then the primary.
 */
export function chooseReader(input: {
  status: ReplicaStatus | undefined;
  maxLagMs: number;
  readAfter?: string;
}): ReadChoice {
  const { status } = input;
  if (status === undefined) return { source: "primary", reason: "not-configured" };
  if (!status.reachable) return { source: "primary", reason: "unreachable" };
  if (status.lagMs > input.maxLagMs) return { source: "primary", reason: "lagging" };
  if (input.readAfter !== undefined && lsnValue(status.replayLsn) < lsnValue(input.readAfter)) {
    return { source: "primary", reason: "own-write" };
  }
  return { source: "replica" };
}

/**
 * The lag of a replica that replayed up to `replayLsn` while the primary was at `primaryLsn`
 * (read just before): none when it has all of it, else how old its last replayed commit is
 * (unknown, after a restart with nothing replayed yet: as bad as can be).
 */
export function replicaLagMs(input: {
  primaryLsn: string;
  replayLsn: string;
  msSinceLastReplay: number | null;
}): number {
  if (lsnValue(input.replayLsn) >= lsnValue(input.primaryLsn)) return 0;
  return input.msSinceLastReplay ?? Number.POSITIVE_INFINITY;
}
