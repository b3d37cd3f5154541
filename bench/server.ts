import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpuSecondsOfStat } from "./proc-cpu.js";

export type RunningServer = {
  origin: string;
  pid: number;
  /** CPU seconds (user + system) the server process has used so far. */
  cpuSeconds(): number;
  /** The server's peak resident set size so far, in MB (VmHWM). */
  peakRssMb(): number;
  stop(): Promise<void>;
};

/** Starts `trading-reports serve` as a child process and waits for its listening line. */
export async function startServer(
  env: Record<string, string>,
  seedFile?: string,
  serveArgs: string[] = [],
): Promise<RunningServer> {
  // The flags of the `trading-reports` bin's shebang, so that the server runs as users run it.
  const shebang = readFileSync("dist/main.js", "utf8").split("\n", 1)[0] ?? "";
  const binFlags = shebang.split(" ").filter((word) => word.startsWith("--"));
  // BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the server.
  const extra = process.env.BENCH_SERVER_NODE_ARGS?.split(" ").filter(Boolean) ?? [];
  const nodeArgs = [...binFlags, ...extra];
  const args = [
    ...nodeArgs,
    "dist/main.js",
    "serve",
    "--port",
    "0",
    ...(seedFile ? ["--seed", seedFile] : []),
    ...serveArgs,
  ];
  const child = spawn(process.execPath, args, {
    env: {
      ...process.env,
      LOG_LEVEL: "warn",
      RATE_LIMIT_PER_MINUTE: "100000000",
      // Every benchmark client connects from 127.0.0.1.
      RATE_LIMIT_PER_ADDRESS_PER_MINUTE: "100000000",
      MAX_CONNECTIONS_PER_ADDRESS: "100000",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 120_000);
    child.stdout?.on("data", (d: Buffer) => {
      const match = /listening on (http:\/\/\S+)/.exec(d.toString());
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.on("exit", (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
  });
  const pid = child.pid ?? 0;
  return {
    origin,
    pid,
    cpuSeconds: () => cpuSecondsOfStat(readFileSync(`/proc/${pid}/stat`, "utf8")),
    peakRssMb: () => {
      const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      return Number(match?.[1] ?? 0) / 1024;
    },
    stop: () => stopChild(child),
  };
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

type LoadResult = {
  latencies: number[];
  errors: string[];
  errorCount: number;
  elapsedMs: number;
  /** The load client's CPU seconds while it sent. */
  cpuSeconds: number;
};

/** Runs the load client in its own process with `job` on stdin. */
export function runLoad(job: object): Promise<LoadResult> {
  return startLoad(job).done;
}

/** The same, stoppable: `stop()` ends a job sent with `untilStopped` (SIGTERM to the client). */
export function startLoad(job: object): { done: Promise<LoadResult>; stop(): Promise<LoadResult> } {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/load-client.ts"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stdin?.end(JSON.stringify(job));
  const done = new Promise<LoadResult>((resolve, reject) =>
    child.on("exit", (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`load client exited ${code}`)),
    ),
  );
  return {
    done,
    stop: () => {
      child.kill("SIGTERM");
      return done;
    },
  };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? Number.NaN;
}

/** The middle value (of an even count, the upper of the two middle ones). */
export function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
}
