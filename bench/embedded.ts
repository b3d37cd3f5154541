/**
 * Issue 19, goal 4: what the embedded database costs an operator. `npm start`'s server (demo
 * data on PGlite) and its resident memory once loaded; then ingest over HTTP into a PGlite data
 * directory that already holds `size` reports, with the server's memory after it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadFixture } from "../src/services/fixtures.js";
import { openDatabase } from "../src/store/database.js";
import { migrate } from "../src/store/migrate.js";
import { createStores } from "../src/store/stores.js";
import { bulkGenerate } from "./bulk.js";
import { benchFixture, INGEST_ORG, orgKey, v2Batch } from "./data.js";
import { runLoad, startServer } from "./server.js";

export type EmbeddedResults = {
  /** `npm start` (serve --demo on a fresh DATA_DIR): resident memory once it listens. */
  demoRssMb: number;
  /** Reports in the PGlite data directory before the ingest. */
  reports: number;
  ingestRecordsPerSecond: number;
  ingestNodeCpuUsPerRecord: number;
  /** The server's resident memory after the ingest, and its peak. */
  rssMb: number;
  peakRssMb: number;
};

const BATCH = 300;

export async function embeddedSuite(
  work: string,
  options: { reports: number; batches: number; log: (s: string) => void },
): Promise<EmbeddedResults> {
  const demo = await startServer(
    { DATA_DIR: join(work, "embedded-demo"), DATABASE_URL: "" },
    undefined,
    ["--demo"],
  );
  const demoRssMb = rssMb(demo.pid);
  await demo.stop();
  options.log(`  npm start (demo): ${demoRssMb} MB resident`);

  const dataDir = join(work, "embedded-data");
  const database = await openDatabase({ kind: "pglite", dataDir });
  await migrate(database.db);
  await loadFixture(createStores(database.db), benchFixture(), new Date());
  await bulkGenerate(database.db, 0, options.reports, options.log);
  await database.close();

  const server = await startServer({ DATA_DIR: dataDir, DATABASE_URL: "" });
  const cpu0 = server.cpuSeconds();
  const r = await runLoad({
    origin: server.origin,
    key: orgKey(INGEST_ORG),
    requests: Array.from({ length: options.batches }, (_, b) => ({
      method: "POST",
      path: "/api/v2/report",
      body: JSON.stringify({ data: v2Batch(b, BATCH, 0) }),
    })),
    concurrency: 4,
    expectStatus: 201,
  });
  const records = options.batches * BATCH;
  const result = {
    demoRssMb,
    reports: options.reports,
    ingestRecordsPerSecond: Math.round(records / (r.elapsedMs / 1000)),
    ingestNodeCpuUsPerRecord: Math.round(((server.cpuSeconds() - cpu0) * 1e7) / records) / 10,
    rssMb: rssMb(server.pid),
    peakRssMb: Math.round(server.peakRssMb()),
  };
  await server.stop();
  options.log(
    `  PGlite at ${options.reports} reports: ingest ${result.ingestRecordsPerSecond} records/s, RSS ${result.rssMb} MB (peak ${result.peakRssMb})`,
  );
  return result;
}

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Math.round(Number(match?.[1] ?? 0) / 1024);
}

export function embeddedLines(r: EmbeddedResults): string[] {
  return [
    "### pglite: embedded (what `npm start` and a PGlite data directory cost)",
    "",
    "| measure | value |",
    "|---|---:|",
    `| \`npm start\` (demo loaded) resident memory, MB | ${r.demoRssMb} |`,
    `| ingest over HTTP into ${r.reports.toLocaleString("en-US")} reports, 4 clients, records/s | ${r.ingestRecordsPerSecond} |`,
    `| Node CPU per record, µs (PGlite runs inside the server process) | ${r.ingestNodeCpuUsPerRecord} |`,
    `| server resident memory after that ingest, MB (peak) | ${r.rssMb} (${r.peakRssMb}) |`,
    "",
  ];
}
