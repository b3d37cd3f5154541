import { Worker } from "node:worker_threads";

export type DiskWatchdogOptions = {
  /** DATA_DIR: the folder whose file system is read. */
  path: string;
  /** How long the server's thread may stay silent on a full disk before the process ends. */
  stallMs: number;
  /** Less free than this is a full disk (PGlite needs 16 MiB for a new WAL segment). */
  fullBelowBytes: number;
};

export const DISK_WATCHDOG_DEFAULTS = { stallMs: 15_000, fullBelowBytes: 32 * 1024 * 1024 };

/**
 * The worker's code, run beside the server's thread: every second it reads the server's
 * heartbeat, and while that has not moved it reads the disk. A thread silent for `stallMs`
 * that saw the disk full meanwhile is PGlite spinning on a WAL write that found no space (see
 * DiskSpaceGuard), from which it never returns, even once space is freed: the worker says so
 * on stderr, in the log's JSON shape, and ends the process for its supervisor to restart.
 * The worker cannot run the server's code (it is stuck), hence a string run on its own.
 */
const WORKER = `
const { statfsSync, writeSync } = require("node:fs");
const { workerData } = require("node:worker_threads");
const { beats, path, stallMs, fullBelowBytes } = workerData;
let lastBeat = Atomics.load(beats, 0);
let silentSince = Date.now();
let sawFull = false;
let freeMib = 0;
setInterval(() => {
  const beat = Atomics.load(beats, 0);
  if (beat !== lastBeat) {
    lastBeat = beat;
    silentSince = Date.now();
    sawFull = false;
    return;
  }
  const silentMs = Date.now() - silentSince;
  if (silentMs < 2000) return;
  try {
    const stats = statfsSync(path);
    freeMib = Math.floor((stats.bavail * stats.bsize) / 1048576);
    if (stats.bavail * stats.bsize < fullBelowBytes) sawFull = true;
  } catch {}
  if (!sawFull || silentMs < stallMs) return;
  const msg = "the embedded database has not answered for " + Math.round(silentMs / 1000) +
    " s since its disk was full (" + freeMib + " MiB free now in " + path + "): PGlite does not " +
    "recover from a WAL write that found no space, so the process ends (SIGKILL) for its " +
    "supervisor to restart it; every acknowledged report is kept. Free space in DATA_DIR first.";
  writeSync(2, JSON.stringify({ level: 60, time: Date.now(), pid: process.pid, msg }) + "\\n");
  process.kill(process.pid, "SIGKILL");
}, 1000);
`;

/** Starts the watchdog; `stop` ends it (at shutdown). Neither keeps the process alive. */
export function startDiskWatchdog(options: DiskWatchdogOptions): { stop(): Promise<void> } {
  const beats = new Int32Array(new SharedArrayBuffer(4));
  const heartbeat = setInterval(() => Atomics.add(beats, 0, 1), 500);
  heartbeat.unref();
  // No flags of the process (`--input-type=module` would read the code as a module).
  const worker = new Worker(WORKER, {
    eval: true,
    execArgv: [],
    workerData: { beats, ...options },
  });
  worker.on("error", () => {}); // a watchdog that failed must not take the server with it
  worker.unref();
  return {
    async stop() {
      clearInterval(heartbeat);
      await worker.terminate();
    },
  };
}
