/**
 * Issue 19, goal 4: the embedded database under several PGLITE_SETTINGS, interleaved on the
 * same data, so that a loaded machine's drift falls on every setting alike. For each round and
 * each setting: `npm start`'s server (a fresh DATA_DIR, demo loaded; then restarted on it),
 * and HTTP ingest into a copy of one PGlite data directory of REPORTS reports.
 *
 *   npm run build && npm run bench:embedded-settings -- REPORTS ROUNDS SETTINGS...
 *   e.g. -- 1000000 3 shared_buffers=128MB shared_buffers=16MB
 *
 * BENCH_EMBEDDED_SOURCE: a data directory of REPORTS reports made by an earlier run (kept,
 * never written); BENCH_SKIP_DEMO=1: ingest only. Prints one JSON line per measurement.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadFixture } from "../src/services/fixtures.js";
import { openDatabase } from "../src/store/database.js";
import { migrate } from "../src/store/migrate.js";
import { createStores } from "../src/store/stores.js";
import { bulkGenerate } from "./bulk.js";
import { benchFixture, INGEST_ORG, orgKey, v2Batch } from "./data.js";
import { runLoad, startServer } from "./server.js";

const BATCHES = 240;
const BATCH = 300;
const IDLE_MS = 10_000;

const log = (s: string) => console.log(`${new Date().toISOString().slice(11, 19)} ${s}`);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** VmRSS or VmHWM of a process, MB. */
function memoryMb(pid: number, key: "VmRSS" | "VmHWM"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = new RegExp(`${key}:\\s+(\\d+) kB`).exec(status);
  return Math.round(Number(match?.[1] ?? 0) / 1024);
}

const serve = (dataDir: string, settings: string, args: string[] = []) =>
  startServer({ DATA_DIR: dataDir, DATABASE_URL: "", PGLITE_SETTINGS: settings }, undefined, args);

/** `npm start` on an empty DATA_DIR (initdb, migrations, demo), then again on that folder. */
async function demo(work: string, settings: string) {
  const dir = join(work, "demo");
  const first = await serve(dir, settings, ["--demo"]);
  const rssMb = memoryMb(first.pid, "VmRSS");
  await first.stop();
  const again = await serve(dir, settings, ["--demo"]);
  const restartRssMb = memoryMb(again.pid, "VmRSS");
  await again.stop();
  rmSync(dir, { recursive: true, force: true });
  return { rssMb, restartRssMb };
}

async function ingest(work: string, source: string, settings: string) {
  const dir = join(work, "copy");
  cpSync(source, dir, { recursive: true });
  const server = await serve(dir, settings);
  const openRssMb = memoryMb(server.pid, "VmRSS");
  const cpu0 = server.cpuSeconds();
  const load = await runLoad({
    origin: server.origin,
    key: orgKey(INGEST_ORG),
    requests: Array.from({ length: BATCHES }, (_, b) => ({
      method: "POST",
      path: "/api/v2/report",
      body: JSON.stringify({ data: v2Batch(b, BATCH, 0) }),
    })),
    concurrency: 4,
    expectStatus: 201,
  });
  const records = BATCHES * BATCH;
  const result = {
    openRssMb,
    recordsPerSecond: Math.round(records / (load.elapsedMs / 1000)),
    nodeCpuUsPerRecord: Math.round(((server.cpuSeconds() - cpu0) * 1e7) / records) / 10,
    rssMb: memoryMb(server.pid, "VmRSS"),
    peakRssMb: memoryMb(server.pid, "VmHWM"),
  };
  // Whether the memory comes back once the load stops (the WebAssembly heap does not).
  await pause(IDLE_MS);
  const idleRssMb = memoryMb(server.pid, "VmRSS");
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
  return { ...result, idleRssMb };
}

async function generate(dataDir: string, reports: number) {
  const database = await openDatabase({ kind: "pglite", dataDir });
  await migrate(database.db);
  await loadFixture(createStores(database.db), benchFixture(), new Date());
  await bulkGenerate(database.db, 0, reports, log);
  await database.close();
}

async function main() {
  const [reportsArg = "20000", roundsArg = "2", ...variants] = process.argv.slice(2);
  const reports = Number(reportsArg);
  const work = mkdtempSync(join(tmpdir(), "bench-embedded-"));
  const source = process.env.BENCH_EMBEDDED_SOURCE ?? join(work, "data");
  if (process.env.BENCH_EMBEDDED_SOURCE === undefined) await generate(source, reports);
  try {
    for (let round = 1; round <= Number(roundsArg); round++) {
      for (const settings of variants) {
        if (process.env.BENCH_SKIP_DEMO !== "1") {
          log(`round ${round} [${settings}] demo ${JSON.stringify(await demo(work, settings))}`);
        }
        const result = await ingest(work, source, settings);
        log(`round ${round} [${settings}] ingest@${reports} ${JSON.stringify(result)}`);
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
