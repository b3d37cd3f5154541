import { PassThrough } from "node:stream";
import { run } from "../../src/cli/program.js";

/** Runs the `trading-reports` command in-process with `env`; returns its exit code and output. */
export async function runCli(env: Record<string, string>, argv: string[]) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (d) => {
    out += d;
  });
  stderr.on("data", (d) => {
    err += d;
  });
  const code = await run(argv, { stdout, stderr, env });
  return { code, out, err };
}
