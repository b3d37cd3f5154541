/**
 * A load generator run as its own process, so that the server's CPU is the server's alone.
 * Input (argv[2], JSON): { origin, key, requests: [{method, path, body?}], concurrency,
 * expectStatus, untilStopped? }. Output (stdout, JSON): per-request latencies in ms, errors, elapsed ms
 * and the client's own CPU seconds while it sent (its start-up and the job's parsing left out).
 */
import { Pool } from "undici";

type Job = {
  origin: string;
  key: string;
  requests: {
    method: "GET" | "POST";
    path: string;
    body?: string;
    headers?: Record<string, string>;
  }[];
  concurrency: number;
  expectStatus: number;
  /** Send the requests over and over until SIGTERM (a background stream), not once. */
  untilStopped?: boolean;
};

let stopped = false;
process.on("SIGTERM", () => {
  stopped = true;
});
const job = JSON.parse(await readStdin()) as Job;
const pool = new Pool(job.origin, { connections: job.concurrency, pipelining: 1 });
const latencies: number[] = [];
const errors: string[] = [];
let errorCount = 0;
let next = 0;
const started = performance.now();
const cpuAtStart = process.cpuUsage();
await Promise.all(
  Array.from({ length: job.concurrency }, async () => {
    for (let i = next++; !stopped && (job.untilStopped || i < job.requests.length); i = next++) {
      const r = job.requests[i % job.requests.length];
      if (r === undefined) break;
      const t0 = performance.now();
      const res = await pool.request({
        method: r.method,
        path: r.path,
        headers: { authorization: job.key, "content-type": "application/json", ...r.headers },
        body: r.body,
      });
      const text = await res.body.text();
      latencies.push(performance.now() - t0);
      if (res.statusCode !== job.expectStatus) {
        errorCount++;
        if (errors.length < 5) errors.push(`${res.statusCode} ${text.slice(0, 200)}`);
      }
    }
  }),
);
const elapsedMs = performance.now() - started;
const cpu = process.cpuUsage(cpuAtStart);
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
await pool.close();
process.stdout.write(JSON.stringify({ latencies, errors, errorCount, elapsedMs, cpuSeconds }));

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
