import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../src/store/database.js";
import { migrate } from "../src/store/migrate.js";

/**
 * A DATA_DIR made beforehand (0755, or 0777) held PGlite's new cluster world-writable (0666
 * files): any local user could rewrite reports or plant an API key's hash (review of the
 * embedded database). PGlite on disk; nothing here concerns PostgreSQL.
 */
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "trading-reports-modes-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every file and folder under `path` whose mode lets its group or others in. */
function opened(path: string): string[] {
  return readdirSync(path, { recursive: true, encoding: "utf8" }).filter(
    (entry) => (statSync(join(path, entry)).mode & 0o077) !== 0,
  );
}

describe("the embedded database's files", () => {
  it.each([
    0o755, 0o777,
  ])("are this user's alone in a DATA_DIR made beforehand with mode %o", async (mode) => {
    const dataDir = join(dir, mode.toString(8));
    mkdirSync(dataDir);
    chmodSync(dataDir, mode);
    const database = await openDatabase({ kind: "pglite", dataDir });
    try {
      await migrate(database.db);
    } finally {
      await database.close();
    }
    expect(opened(dataDir)).toEqual([]);
    // The folder itself: nobody else may write it (replace its files); the rest is the operator's.
    expect(statSync(dataDir).mode & 0o777).toBe(mode & ~0o022);
  });
});
