import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, until } from "./serve-nodes.js";

export const HAPROXY = process.env.HAPROXY_BIN ?? "/usr/sbin/haproxy";

export type Backend = { name: string; port: number };

export type Haproxy = {
  url: string;
  /** Each server's state from the stats socket (`UP`, `DOWN`, `MAINT`, `UP 1/2`, …). */
  states(): Promise<Record<string, string>>;
  /** The backend's counters: retries and redispatches HAProxy made, 5xx it answered itself. */
  counters(): Promise<{ retries: number; redispatches: number }>;
  waitUntil(name: string, state: "UP" | "DOWN", timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
};

/**
 * The configuration of docs/haproxy.cfg with test timings: `/readyz` checked every
 * `checkMs`, a server out after 2 failed checks and back after 2 good ones; a request that
 * could not be sent, got no answer at all, or got a 503 is tried again on another server.
 */
export function haproxyConfig(port: number, socket: string, backends: Backend[], checkMs: number) {
  return `global
  stats socket ${socket} mode 600 level admin
  maxconn 1000

defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  timeout queue 30s
  option forwardfor
  retries 3
  option redispatch 1
  retry-on conn-failure empty-response 503

frontend api
  bind 127.0.0.1:${port}
  default_backend nodes

backend nodes
  balance roundrobin
  option httpchk
  http-check send meth GET uri /readyz
  http-check expect status 200
  default-server check inter ${checkMs} fall 2 rise 2 maxconn 60
${backends.map((b) => `  server ${b.name} 127.0.0.1:${b.port}`).join("\n")}
`;
}

/** Starts HAProxy (config in a temp dir) in front of `backends`; waits until all are UP. */
export async function startHaproxy(backends: Backend[], checkMs = 200): Promise<Haproxy> {
  const dir = mkdtempSync(join(tmpdir(), "tr-haproxy-"));
  const port = await freePort();
  const socket = join(dir, "admin.sock");
  const config = join(dir, "haproxy.cfg");
  writeFileSync(config, haproxyConfig(port, socket, backends, checkMs));
  const child: ChildProcess = spawn(HAPROXY, ["-f", config, "-db"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const stat = async () => parseStat(await command(socket, "show stat"));
  const haproxy: Haproxy = {
    url: `http://127.0.0.1:${port}`,
    async states() {
      const rows = await stat();
      return Object.fromEntries(
        rows
          .filter((r) => r.pxname === "nodes" && r.svname !== "BACKEND")
          .map((r) => [r.svname, r.status ?? ""]),
      );
    },
    async counters() {
      const backend = (await stat()).find((r) => r.pxname === "nodes" && r.svname === "BACKEND");
      return { retries: Number(backend?.wretr ?? 0), redispatches: Number(backend?.wredis ?? 0) };
    },
    async waitUntil(name, state, timeoutMs = 60_000) {
      await until(
        async () => (await haproxy.states())[name] === state,
        `${name} ${state}`,
        timeoutMs,
      );
    },
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await until(async () => {
      if (child.exitCode !== null) throw new Error(`haproxy exited:\n${out}`);
      const states = await haproxy.states().catch(() => ({}) as Record<string, string>);
      return backends.every((b) => states[b.name] === "UP");
    }, "every server UP in HAProxy");
  } catch (error) {
    await haproxy.stop();
    throw error;
  }
  return haproxy;
}

/** One command on HAProxy's stats socket; its whole answer. */
function command(socket: string, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = "";
    const connection = connect(socket, () => connection.end(`${line}\n`));
    connection.on("data", (d: Buffer) => {
      answer += d.toString();
    });
    connection.on("end", () => resolve(answer));
    connection.on("error", reject);
  });
}

function parseStat(csv: string): Record<string, string>[] {
  const [header = "", ...lines] = csv.trim().split("\n");
  const names = header.replace(/^# /, "").split(",");
  return lines.map((line) => {
    const cells = line.split(",");
    return Object.fromEntries(names.map((name, i) => [name, cells[i] ?? ""]));
  });
}
