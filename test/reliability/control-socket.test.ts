import {
  chmodSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { acquire, type CommandRequest } from "../../src/cli/data-dir-owner.js";
import { onPostgres } from "../helpers/database.js";
import { baseFixture } from "../helpers/fixture.js";
import {
  runCommand,
  START_TIMEOUT_MS,
  sleep,
  startServer,
  stopAllServers,
  within,
  writeSeed,
} from "./support.js";

/**
 * The owner's control socket (`DATA_DIR/.control.sock`) under attack by a local user: garbage,
 * a squatted lock name, trickled bytes, split characters, a planted symlink. Each scenario
 * crashed, fooled or held up the old single abstract socket. PGlite only (no DATA_DIR else).
 */

const dirs: string[] = [];
function freshDir(): string {
  const path = realpathSync(mkdtempSync(join(tmpdir(), "tr-control-")));
  dirs.push(path);
  return path;
}
afterAll(async () => {
  await stopAllServers();
  for (const path of dirs) rmSync(path, { recursive: true, force: true });
});

const control = (dir: string) => join(dir, ".control.sock");
const tokenOf = (dir: string) =>
  (JSON.parse(readFileSync(join(dir, ".owner.json"), "utf8")) as { token: string }).token;

/** Writes `parts` (pausing between them), resolves with everything answered until close. */
function talk(path: string, parts: (string | Buffer)[], pauseMs = 0): Promise<string> {
  return within(
    new Promise<string>((resolve, reject) => {
      let text = "";
      const socket = connect(path);
      socket.setEncoding("utf8");
      socket.on("data", (chunk: string) => {
        text += chunk;
      });
      socket.once("error", reject);
      socket.once("close", () => resolve(text));
      socket.once("connect", async () => {
        for (const part of parts) {
          if (socket.destroyed) return;
          socket.write(part);
          if (pauseMs > 0) await sleep(pauseMs);
        }
      });
    }),
    30_000,
    "the control socket to answer",
  );
}

/** A connection that sends one byte every 500 ms and never a newline. */
function trickle(path: string): { socket: Socket; closed: Promise<number> } {
  const socket = connect(path);
  const startedAt = Date.now();
  socket.on("error", () => {});
  const timer = setInterval(() => {
    if (socket.writable) socket.write(" ");
  }, 500);
  const closed = new Promise<number>((resolve) =>
    socket.once("close", () => {
      clearInterval(timer);
      resolve(Date.now() - startedAt);
    }),
  );
  return { socket, closed };
}

const SLOW = 4 * START_TIMEOUT_MS;

describe.skipIf(onPostgres)("the control socket of a DATA_DIR owner", () => {
  it(
    "serve survives garbage requests, and SIGTERM is not held off by a trickling client",
    async () => {
      const dataDir = freshDir();
      const seedFile = writeSeed(freshDir(), baseFixture());
      const server = await startServer({ seedFile, env: { DATA_DIR: dataDir } });
      expect(statSync(control(dataDir)).mode & 0o777).toBe(0o600);
      const token = tokenOf(dataDir);
      const garbage = [
        `{"token":"${"é…é".repeat(21)}é"}\n`, // 64 characters, more than 64 bytes
        "null\n",
        "[1,2]\n",
        '"text"\n',
        `{"token":"${token}","argv":"x","cwd":"/"}\n`,
        `{"token":"${token}","argv":[1],"cwd":"/"}\n`,
        `{"token":"${token}","argv":[],"cwd":"/","env":{"A":1}}\n`,
        "{not json\n",
      ];
      for (const line of garbage) {
        const answered = await talk(control(dataDir), [line]);
        expect(answered, line).toMatch(/"type":"refused"/);
        expect(server.alive(), `serve died on ${line}`).toBe(true);
      }
      const listed = await runCommand(["key", "list", "acme"], { DATA_DIR: dataDir });
      expect(listed.code, listed.stderr).toBe(0);

      const slow = trickle(control(dataDir));
      await sleep(1500);
      process.kill(server.pid, "SIGTERM");
      const exited = await within(
        server.exited,
        10_000,
        "serve to exit on SIGTERM although a client trickles bytes on its control socket",
      );
      expect(exited.signal).toBeNull();
      await within(slow.closed, 5_000, "the trickling connection to be cut");
    },
    SLOW,
  );

  it(
    "a squatted lock name gets nothing: no argv, no env, no token; serve refuses to start",
    async () => {
      const dataDir = freshDir();
      const { dev, ino } = statSync(dataDir, { bigint: true });
      let received = "";
      const squatter = createServer((socket) => {
        socket.on("data", (chunk) => {
          received += chunk.toString();
          socket.end(
            '{"type":"reply","owner":{"pid":1,"command":"x","since":"x"},"code":0,"stdout":"revoked\\n","stderr":""}\n',
          );
        });
      });
      await new Promise<void>((resolve) =>
        squatter.listen(`\0trading-reports/${dev}/${ino}`, resolve),
      );
      try {
        const env = { DATA_DIR: dataDir, COINGECKO_API_KEY: "secret-api-key" };
        const revoked = await runCommand(["key", "revoke", "acme", "abcd"], env);
        expect(revoked.code).toBe(1);
        expect(revoked.stdout).toBe("");
        expect(revoked.stderr).toContain(`${dataDir}/.owner.json`);
        expect(revoked.stderr).toContain("was not sent");
        const served = await runCommand(["serve", "--port", "0"], env);
        expect(served.code).toBe(1);
        expect(served.stderr).toContain(`does not answer on ${control(dataDir)}`);
        expect(received).toBe("");
      } finally {
        await new Promise((resolve) => squatter.close(resolve));
      }
    },
    SLOW,
  );

  it.skipIf(process.getuid?.() !== 0)(
    "another user cannot reach a server: nothing is sent without the owner's token",
    async () => {
      const dataDir = freshDir();
      chmodSync(dataDir, 0o777); // shared with others (think: a group folder), but not its 0600 files
      const ownership = await acquire(dataDir, "trading-reports serve", true);
      let ran = 0;
      ownership?.accept(async () => {
        ran++;
        return { code: 0, stdout: "", stderr: "" };
      });
      try {
        const refused = await runCommand(
          ["key", "list", "acme"],
          { DATA_DIR: dataDir },
          {
            asUser: 65534,
          },
        );
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain(`cannot read ${dataDir}/.owner.json: EACCES`);
        expect(refused.stderr).toContain("was not sent");
        expect(ran).toBe(0);
      } finally {
        await ownership?.release();
      }
    },
    SLOW,
  );

  it(
    "a forwarded command takes PUBLIC_DEPTH_TOLERANCE and COINGECKO_ settings with it, nothing else",
    async () => {
      const dataDir = freshDir();
      const ownership = await acquire(dataDir, "trading-reports serve", true);
      const received: Record<string, string>[] = [];
      ownership?.accept(async (request) => {
        received.push(request.env);
        return { code: 0, stdout: "", stderr: "" };
      });
      try {
        const env = {
          DATA_DIR: dataDir,
          PUBLIC_DEPTH_TOLERANCE: "0.25",
          COINGECKO_API_KEY: "k",
          LOG_LEVEL: "debug",
        };
        expect((await runCommand(["quality", "recompute"], env)).code).toBe(0);
        expect(received).toEqual([{ PUBLIC_DEPTH_TOLERANCE: "0.25", COINGECKO_API_KEY: "k" }]);
      } finally {
        await ownership?.release();
      }
    },
    SLOW,
  );

  it("release cuts open control connections; the request line has a hard deadline and a connection cap", async () => {
    const dataDir = freshDir();
    const first = await acquire(dataDir, "trading-reports serve", true);
    const held = Array.from({ length: 8 }, () => trickle(control(dataDir)));
    await sleep(300);
    const ninth = trickle(control(dataDir));
    await within(ninth.closed, 5_000, "the 9th control connection to be refused");
    const cut = await within(
      Promise.all(held.map((h) => h.closed)),
      15_000,
      "the 10 s request deadline to cut trickling connections",
    );
    expect(Math.min(...cut)).toBeGreaterThanOrEqual(9_000);
    await first?.release();

    const second = await acquire(dataDir, "trading-reports serve", true);
    const slow = trickle(control(dataDir));
    await sleep(1000);
    await within(second?.release() ?? Promise.resolve(), 3_000, "release with a client open");
    await within(slow.closed, 3_000, "the open connection to be cut");
    expect(lstatSync(control(dataDir), { throwIfNoEntry: false })).toBeUndefined();
  }, 60_000);

  it("a character split across chunks arrives whole; .owner.json is not written through a planted symlink", async () => {
    const dataDir = freshDir();
    const victim = join(freshDir(), "victim");
    writeFileSync(victim, "untouched");
    symlinkSync(victim, join(dataDir, ".owner.json.tmp"));
    const ownership = await acquire(dataDir, "trading-reports serve", true);
    const seen: CommandRequest[] = [];
    ownership?.accept(async (request) => {
      seen.push(request);
      return { code: 0, stdout: "ok\n", stderr: "" };
    });
    try {
      expect(readFileSync(victim, "utf8")).toBe("untouched");
      expect(lstatSync(join(dataDir, ".owner.json")).isFile()).toBe(true);
      expect(statSync(join(dataDir, ".owner.json")).mode & 0o777).toBe(0o600);
      const line = Buffer.from(
        `${JSON.stringify({ token: tokenOf(dataDir), argv: ["org", "create", "é"], cwd: "/", env: {} })}\n`,
      );
      const at = line.indexOf(Buffer.from("é")) + 1; // between the two bytes of é
      const answered = await talk(control(dataDir), [line.subarray(0, at), line.subarray(at)], 100);
      expect(answered).toContain('"type":"reply"');
      expect(seen.map((r) => r.argv)).toEqual([["org", "create", "é"]]);
    } finally {
      await ownership?.release();
    }
  });
});
