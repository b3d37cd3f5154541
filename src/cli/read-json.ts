import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { ValidationError } from "../domain/errors.js";

/** Failures the user caused on the command line: exit code 2. */
export class UsageError extends Error {}

/**
 * Reads a JSON input file of an operator command. An unreadable file is a usage error naming
 * the file and the OS error (`cannot read f.json: ENOENT`); text that is not JSON is a
 * validation error. A relative name is read from `cwd` (a command sent to the server that owns
 * DATA_DIR carries the caller's).
 */
export async function readJson(file: string, cwd = process.cwd()): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(resolve(cwd, file), "utf8");
  } catch (error) {
    throw new UsageError(
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ValidationError([
      { message: `${file} is not valid JSON: ${(error as Error).message}` },
    ]);
  }
}
