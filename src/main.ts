#!/usr/bin/env -S node --max-semi-space-size=32
import { run } from "./cli/program.js";

const code = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
});
process.exitCode = code;
