/**
 * Ingest over HTTP with an Idempotency-Key on every batch, beside the same ingest without one
 * (issue 15: within 10 %), and the replay of every keyed batch. Both ingest phases create new
 * keys of the same shape on one server; they alternate in rounds, each going first in every
 * other round, so that drift (the table growing, the machine's other load) falls on both alike.
 */
import { randomUUID } from "node:crypto";
import { INGEST_ORG, orgKey, v2Batch } from "./data.js";
import { type Phase, round } from "./results.js";
import { percentile, runLoad, startServer } from "./server.js";

export type IdempotencyResults = {
  withoutKey: Phase;
  withKey: Phase;
  /** Every keyed batch sent again: answered from the kept 201s. */
  replay: Phase;
  /** Records/s with a key over records/s without one (1 = no cost; target >= 0.9). */
  ratio: number;
};

const BATCH = 300;
/** Batches per phase and round: two waves of the clients, then the other phase's turn. */
const WAVES_PER_ROUND = 2;

type Request = { method: "POST"; path: string; body: string; headers?: Record<string, string> };

export async function idempotencySuite(
  env: Record<string, string>,
  fixtureFile: string,
  options: { batches: number; concurrency: number; log: (line: string) => void },
): Promise<IdempotencyResults> {
  const server = await startServer({ ...env, DB_POOL_SIZE: "10" }, fixtureFile);
  const perRound = options.concurrency * WAVES_PER_ROUND;
  const rounds = Math.max(2, Math.round(options.batches / perRound));
  const request = (data: unknown[], key?: string): Request => ({
    method: "POST",
    path: "/api/v2/report",
    body: JSON.stringify({ data }),
    ...(key === undefined ? {} : { headers: { "idempotency-key": key } }),
  });
  const totals = { withoutKey: new Totals(), withKey: new Totals(), replay: new Totals() };
  const keyed: Request[] = [];
  const load = (requests: Request[]) =>
    runLoad({
      origin: server.origin,
      key: orgKey(INGEST_ORG),
      requests,
      concurrency: options.concurrency,
      expectStatus: 201,
    });
  try {
    for (let r = 0; r < rounds; r++) {
      const batches = (offset: number) =>
        Array.from({ length: perRound }, (_, b) => v2Batch(r * perRound + b, BATCH, offset));
      const withKeys = batches(2_000_000).map((data) => request(data, randomUUID()));
      keyed.push(...withKeys);
      const turns = [
        async () => totals.withoutKey.add(await load(batches(0).map((data) => request(data)))),
        async () => totals.withKey.add(await load(withKeys)),
      ];
      // Each phase goes first in every other round: neither gets the colder start.
      for (const turn of r % 2 ? turns.reverse() : turns) await turn();
    }
    totals.replay.add(await load(keyed));
  } finally {
    await server.stop();
  }
  const phases = {
    withoutKey: totals.withoutKey.phase(),
    withKey: totals.withKey.phase(),
    replay: totals.replay.phase(),
  };
  for (const [name, p] of Object.entries(phases)) {
    options.log(
      `  idempotency, ${name}: ${p.recordsPerSecond} records/s, p50 ${p.p50Ms} ms, p99 ${p.p99Ms} ms, errors ${p.errors}`,
    );
  }
  const ratio = round(phases.withKey.recordsPerSecond / phases.withoutKey.recordsPerSecond, 3);
  options.log(`  idempotency: with key / without = ${ratio}`);
  return { ...phases, ratio };
}

/** Latencies, time and errors summed over the rounds of one phase. */
class Totals {
  private readonly latencies: number[] = [];
  private elapsedMs = 0;
  private errors = 0;

  add(run: { latencies: number[]; elapsedMs: number; errorCount: number }): void {
    this.latencies.push(...run.latencies);
    this.elapsedMs += run.elapsedMs;
    this.errors += run.errorCount;
  }

  phase(): Phase {
    const records = this.latencies.length * BATCH;
    return {
      records,
      recordsPerSecond: Math.round(records / (this.elapsedMs / 1000)),
      p50Ms: round(percentile(this.latencies, 50)),
      p99Ms: round(percentile(this.latencies, 99)),
      errors: this.errors,
    };
  }
}

/** The Markdown of these figures for bench/results/latest.md. */
export function idempotencyLines(target: string, r: IdempotencyResults): string[] {
  const lines = [
    `### ${target}: ingest with an Idempotency-Key on every batch (v2 batches of ${BATCH})`,
    "",
    "| phase | records/s | p50 ms | p99 ms |",
    "|---|---:|---:|---:|",
  ];
  for (const name of ["withoutKey", "withKey", "replay"] as const) {
    const p = r[name];
    lines.push(`| ${name} | ${p.recordsPerSecond} | ${p.p50Ms} | ${p.p99Ms} |`);
  }
  const verdict = r.ratio >= 0.9 ? "met" : "missed";
  lines.push("", `With a key / without: ${r.ratio} (target >= 0.9: ${verdict})`, "");
  return lines;
}
