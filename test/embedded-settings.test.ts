import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { openDatabase } from "../src/store/database.js";
import { createSystem } from "../src/system.js";
import { freshDatabase, onPostgres } from "./helpers/database.js";

/**
 * Issue 19: the embedded database's PostgreSQL settings (PGLITE_SETTINGS over the service's
 * own smaller shared buffers). In-memory PGlite; nothing here concerns PostgreSQL.
 */
describe("embedded database settings", () => {
  it("reads PGLITE_SETTINGS as name=value pairs, and leaves them out when unset", () => {
    const config = loadConfig({ PGLITE_SETTINGS: " shared_buffers = 32MB, work_mem=2MB " });
    expect(config.database).toEqual({
      kind: "pglite",
      dataDir: "./data",
      diskReserveBytes: 256 * 1024 * 1024,
      settings: ["shared_buffers=32MB", "work_mem=2MB"],
    });
    expect(loadConfig({ PGLITE_SETTINGS: "" }).database).toEqual({
      kind: "pglite",
      dataDir: "./data",
      diskReserveBytes: 256 * 1024 * 1024,
    });
  });

  it("reads EMBEDDED_DISK_RESERVE_MB (0: no reserve), and refuses what is not a whole number", () => {
    expect(loadConfig({ EMBEDDED_DISK_RESERVE_MB: "0" }).database).toMatchObject({
      diskReserveBytes: 0,
    });
    expect(loadConfig({ EMBEDDED_DISK_RESERVE_MB: "1024" }).database).toMatchObject({
      diskReserveBytes: 1024 * 1024 * 1024,
    });
    for (const bad of ["-1", "1.5", "lots"]) {
      expect(() => loadConfig({ EMBEDDED_DISK_RESERVE_MB: bad })).toThrow(ConfigError);
    }
  });

  it("refuses a value that is not name=value pairs", () => {
    for (const bad of ["shared_buffers", "shared_buffers=1;drop table reports", "a=1,,b=2"]) {
      expect(() => loadConfig({ PGLITE_SETTINGS: bad })).toThrow(ConfigError);
    }
  });

  it("runs with 16 MB of shared buffers unless PGLITE_SETTINGS says otherwise", async () => {
    const shown = async (settings?: string[]) => {
      const database = await openDatabase({ kind: "pglite", dataDir: undefined, settings });
      try {
        const { rows } = await sql<{ shared_buffers: string; work_mem: string }>`
          select current_setting('shared_buffers') as shared_buffers,
            current_setting('work_mem') as work_mem`.execute(database.db);
        return rows[0];
      } finally {
        await database.close();
      }
    };
    expect(await shown()).toEqual({ shared_buffers: "16MB", work_mem: "4MB" });
    expect(await shown(["shared_buffers=128MB", "work_mem=2MB"])).toEqual({
      shared_buffers: "128MB",
      work_mem: "2MB",
    });
  });

  it("says which setting PostgreSQL refused", async () => {
    await expect(
      openDatabase({ kind: "pglite", dataDir: undefined, settings: ["shared_bufers=16MB"] }),
    ).rejects.toThrow('unrecognized configuration parameter "shared_bufers"');
  });

  it("refuses to start on a database that prints float8 values rounded", async () => {
    const config = loadConfig({ DATA_DIR: "memory://", PGLITE_SETTINGS: "extra_float_digits=0" });
    await expect(createSystem(config)).rejects.toThrow(
      /prints float8 values rounded \(extra_float_digits = 0\)/,
    );
    const fine = await createSystem(loadConfig({ DATA_DIR: "memory://" }));
    await fine.close();
  });

  it.skipIf(!onPostgres)("refuses the same on PostgreSQL (a database's setting)", async () => {
    const database = await freshDatabase();
    try {
      if (database.config.kind !== "postgres") throw new Error("PostgreSQL only");
      const name = new URL(database.config.url).pathname.slice(1);
      await sql`alter database ${sql.id(name)} set extra_float_digits = 0`.execute(database.db);
      const config = loadConfig({ DATABASE_URL: database.config.url });
      await expect(createSystem(config)).rejects.toThrow(/extra_float_digits = 0/);
    } finally {
      await database.close();
    }
  });
});
