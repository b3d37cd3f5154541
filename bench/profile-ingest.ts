/**
 * `npm run bench:profile-ingest [-- BATCHES]`: profiles the server (`--cpu-prof`) under the
 * ingest benchmark's load (4 clients, v2 batches of 300 new keys, PostgreSQL) and prints the
 * Node CPU per record (/proc) and the top self-time frames of the load (issue 19).
 */
import { execFileSync } from "node:child_process";
import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { adminQuery, databaseUrl } from "./admin-database.js";
import { benchFixture, INGEST_ORG, orgKey, v2Batch } from "./data.js";
import { runLoad, startServer } from "./server.js";

const BATCH = 300;
const batches = Number(process.argv[2] ?? 400);

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
};
type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

execFileSync("npx", ["tsc", "-p", "tsconfig.build.json"], { stdio: "inherit" });
const work = mkdtempSync(join(tmpdir(), "trading-reports-profile-"));
const name = `tr_bench_profile_${Date.now()}`;
await adminQuery(`create database ${name}`);
try {
  const fixtureFile = join(work, "fixture.json");
  writeFileSync(fixtureFile, JSON.stringify(benchFixture()));
  const url = databaseUrl(name);
  process.env.BENCH_SERVER_NODE_ARGS = `--cpu-prof --cpu-prof-dir=${work}`;
  const server = await startServer({ DATABASE_URL: url, DB_POOL_SIZE: "10" }, fixtureFile);
  const load = (count: number, offset: number) =>
    runLoad({
      origin: server.origin,
      key: orgKey(INGEST_ORG),
      requests: Array.from({ length: count }, (_, b) => ({
        method: "POST",
        path: "/api/v2/report",
        body: JSON.stringify({ data: v2Batch(b, BATCH, offset) }),
      })),
      concurrency: 4,
      expectStatus: 201,
    });
  await load(40, 8_000_000); // warm-up: JIT, pool, caches
  const cpu0 = server.cpuSeconds();
  const r = await load(batches, 0);
  const cpu = server.cpuSeconds() - cpu0;
  await server.stop();
  const records = batches * BATCH;
  const line = `${Math.round(records / (r.elapsedMs / 1000))} records/s, ${r.errorCount} errors`;
  process.stdout.write(`${line}, Node ${((cpu * 1e6) / records).toFixed(1)} µs/record\n`);
  const file = readdirSync(work).find((f) => f.endsWith(".cpuprofile"));
  if (file) process.stdout.write(topFrames(JSON.parse(readFileSync(join(work, file), "utf8"))));
  // BENCH_PROFILE_KEEP=FILE keeps the profile (for Chrome DevTools or a closer look).
  const keep = process.env.BENCH_PROFILE_KEEP;
  if (file && keep) copyFileSync(join(work, file), keep);
} finally {
  await adminQuery(`drop database if exists ${name} with (force)`);
  rmSync(work, { recursive: true, force: true });
}

/** Self time per function, busiest first, as a share of the non-idle samples. */
function topFrames(profile: Profile, count = 30): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const self = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id);
    if (frame === undefined || frame.functionName === "(idle)") return;
    const where = frame.url.replace(/.*node_modules\//, "").replace(`file://${process.cwd()}/`, "");
    const key = `${frame.functionName || "(anonymous)"} ${where}:${frame.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
    busy += profile.timeDeltas[i] ?? 0;
  });
  const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, count);
  const lines = top.map(([k, v]) => `${((v / busy) * 100).toFixed(1).padStart(5)} %  ${k}`);
  return `busy ${(busy / 1e6).toFixed(2)} s (whole process, start-up included)\n${lines.join("\n")}\n`;
}
