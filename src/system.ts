import { createCoinGeckoClient } from "./adapters/coingecko-client.js";
import type { Config } from "./config.js";
import { type AppOptions, buildApp } from "./http/app.js";
import { createAdminServices } from "./services/admin.js";
import { createServices } from "./services/index.js";
import { type Database, openDatabase } from "./store/database.js";
import { migrate } from "./store/migrate.js";
import { createStores } from "./store/stores.js";

/**
 * The composition root: the whole system, wired once. `serve` and every CLI command build
 * one; nothing else creates stores or services.
 *
 *   config ─► database (PGlite or PostgreSQL) ─► stores (all SQL)
 *          ─► services (market-maker use cases, called by http/ and cli/)
 *          ─► admin (operator use cases, with the CoinGecko adapter)
 *          ─► http (the Fastify app over the services; `serve` makes it listen)
 */
export async function createSystem(
  config: Config,
  options: {
    /** An open, migrated database (its `close` is called by the system's); else opened here. */
    database?: Database;
    now?: () => Date;
  } = {},
) {
  const database = options.database ?? (await openMigrated(config));
  const stores = createStores(database.db);
  const now = options.now ?? (() => new Date());
  const services = createServices(stores, {
    referenceDataCheckMs: config.referenceDataCheckMs,
    now,
  });
  const admin = createAdminServices(stores, {
    now,
    coinGecko: (onRetry) => createCoinGeckoClient({ ...config.coinGecko, onRetry }),
  });
  /** The HTTP API over these services (not listening yet). */
  const http = (logger: AppOptions["logger"]) => buildApp({ services, http: config.http, logger });
  return { config, database, stores, services, admin, http, close: () => database.close() };
}

export type System = Awaited<ReturnType<typeof createSystem>>;

async function openMigrated(config: Config): Promise<Database> {
  const database = await openDatabase(config.database);
  try {
    await migrate(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}
