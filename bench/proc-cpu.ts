import { readdirSync, readFileSync } from "node:fs";

const CLOCK_TICKS_PER_SECOND = 100;

/** The CPU seconds (user + system) so far of the process whose `/proc/PID/stat` is `stat`. */
export function cpuSecondsOfStat(stat: string): number {
  // utime and stime: fields 14 and 15, counted after the command's closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/**
 * CPU seconds so far of each `postgres` backend of this machine serving `database` (a
 * backend's title names its database), by PID. Autovacuum's workers are left out: they follow
 * the inserts on the launcher's schedule, whichever phase runs by then.
 */
function postgresSeconds(database: string): Map<string, number> {
  const seconds = new Map<string, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    let title: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (!stat.includes(" (postgres) ")) continue;
      title = readFileSync(`/proc/${entry}/cmdline`, "utf8");
    } catch {
      continue; // the process ended meanwhile
    }
    const words = title.split(" ");
    if (!words.includes(database) || words.includes("autovacuum")) continue;
    seconds.set(entry, cpuSecondsOfStat(stat));
  }
  return seconds;
}

/**
 * The CPU seconds the backends of `database` spend from now on (PostgreSQL on this machine):
 * with one phase of work running at a time, what its statements cost. The checkpointer's and
 * the WAL writer's share is left out: it falls on whichever phase a checkpoint meets.
 * Throughput on a shared 2-core machine swings by a tenth from run to run; the CPU a
 * statement costs swings less. Counted per process, so that a connection closing meanwhile
 * (an idle pool's) takes nothing away; a process that ends before `seconds()` is read is not
 * counted. Zero where PostgreSQL is not local.
 */
export function postgresCpuMeter(database: string): { seconds(): number } {
  const before = postgresSeconds(database);
  return {
    seconds() {
      let total = 0;
      for (const [pid, now] of postgresSeconds(database)) total += now - (before.get(pid) ?? 0);
      return total;
    },
  };
}
