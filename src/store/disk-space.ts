import { statfs } from "node:fs/promises";

/** How often the embedded database's free space is read. */
const CHECK_INTERVAL_MS = 1_000;
const MIB = 1024 * 1024;

/**
 * SQLSTATE 53100 (disk_full): what PostgreSQL says when it cannot extend a file, so that a
 * refused write is answered as PostgreSQL's own would be (503 with Retry-After).
 */
export class DiskNearlyFullError extends Error {
  readonly code = "53100";
}

/** Free space of a file system, in bytes (what an unprivileged writer may use). */
export async function freeBytes(path: string): Promise<number> {
  const stats = await statfs(path);
  return stats.bavail * stats.bsize;
}

/**
 * Statements that write: any statement but a read or a transaction's control. A statement the
 * service sends that writes names one of these words (its texts are ours; values travel as
 * parameters). Scripts (migrations) write.
 */
const WRITING = /\b(insert|update|delete|merge|create|alter|drop|truncate|copy|vacuum|reindex)\b/i;
export const writes = (statement: string) => WRITING.test(statement);

/**
 * The embedded database's disk reserve (EMBEDDED_DISK_RESERVE_MB). PGlite that runs out of
 * space while writing its WAL does not fail the statement: it spins in XLogFlush on the server's
 * thread for good (measured: 100 % CPU, no request answered, SIGTERM unheard; after a kill -9
 * every acknowledged report is there). So writes are refused while less than the reserve is
 * free, before PGlite is asked; reads go on. The free space is read every second, so one
 * second's writes must fit in the reserve; a statement larger than that is the watchdog's
 * (disk-watchdog.ts).
 */
export class DiskSpaceGuard {
  private free = Number.POSITIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly path: string,
    private readonly reserveBytes: number,
    private readonly onChange: (low: boolean, message: string) => void = () => {},
    private readonly read: (path: string) => Promise<number> = freeBytes,
  ) {}

  /** Reads the free space now and then every second (the timer keeps no process alive). */
  async start(): Promise<void> {
    await this.check();
    this.timer = setInterval(() => void this.check(), CHECK_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Throws DiskNearlyFullError for a statement that writes while the disk is nearly full. */
  admit(statement: string): void {
    if (this.isLow() && writes(statement)) throw new DiskNearlyFullError(this.describe());
  }

  /** Says the state now to `onChange` (a listener added once the disk was already low). */
  announce(): void {
    this.onChange(this.isLow(), this.describe());
  }

  isLow(): boolean {
    return this.free < this.reserveBytes;
  }

  async check(): Promise<void> {
    const wasLow = this.isLow();
    try {
      this.free = await this.read(this.path);
    } catch {
      return; // the last reading stands; PGlite's own error says what is wrong with the folder
    }
    if (this.isLow() !== wasLow) this.onChange(this.isLow(), this.describe());
  }

  private describe(): string {
    const mib = (bytes: number) => Math.floor(bytes / MIB);
    return this.isLow()
      ? `the embedded database's disk is nearly full: ${mib(this.free)} MiB free in ${this.path}, less than the reserve of ${mib(this.reserveBytes)} MiB (EMBEDDED_DISK_RESERVE_MB); writes are refused (503) until space is freed`
      : `the embedded database's disk has ${mib(this.free)} MiB free in ${this.path} again; writes are accepted`;
  }
}
