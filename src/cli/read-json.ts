import { isUtf8 } from "node:buffer";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { ValidationError } from "../domain/errors.js";

/** Failures the user caused on the command line: exit code 2. */
export class UsageError extends Error {}

/**
 * Reads a JSON input file of an operator command. An unreadable file is a usage error naming
 * the file and the OS error (`cannot read f.json: ENOENT`); bytes that are not UTF-8, or text
 * that is not JSON, are a validation error. A relative name is read from `cwd` (a command sent
 * to the server that owns DATA_DIR carries the caller's).
 */
export async function readJson(file: string, cwd = process.cwd()): Promise<unknown> {
  let bytes: Buffer;
  try {
    bytes = await readFile(resolve(cwd, file));
  } catch (error) {
    throw new UsageError(
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  // Decoded as UTF-8 anyway, each other byte would become U+FFFD: a Latin-1 `é` silently lost.
  if (!isUtf8(bytes)) {
    throw new ValidationError([
      { message: `${file} is not valid UTF-8: save it as UTF-8 and load it again` },
    ]);
  }
  const text = bytes.toString("utf8");
  try {
    // Editors on Windows save UTF-8 with a byte order mark, which JSON.parse refuses.
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    throw new ValidationError([
      { message: `${file} is not valid JSON: ${(error as Error).message}` },
    ]);
  }
}
