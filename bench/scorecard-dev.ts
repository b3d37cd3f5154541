/**
 * `npm run bench:scorecard-dev [-- drop]`: keeps a PostgreSQL database `tr_scorecard_dev` with
 * the listing's 1 M reports and the scorecard and dashboard datasets, to EXPLAIN the scorecard
 * queries against without regenerating it each time; `drop` removes it.
 */
import { loadFixture } from "../src/services/fixtures.js";
import { openDatabase } from "../src/store/database.js";
import { migrate } from "../src/store/migrate.js";
import { createStores } from "../src/store/stores.js";
import { adminQuery, databaseUrl } from "./admin-database.js";
import { bulkGenerate } from "./bulk.js";
import { dashboardDataset } from "./dashboard.js";
import { benchFixture } from "./data.js";
import { scorecardDataset } from "./scorecards.js";

const NAME = "tr_scorecard_dev";
const size = Number(process.env.BENCH_LISTING_SIZES ?? 1_000_000);

if (process.argv.includes("drop")) {
  await adminQuery(`drop database if exists ${NAME} with (force)`);
} else {
  await adminQuery(`create database ${NAME}`);
  const url = databaseUrl(NAME);
  const database = await openDatabase({
    kind: "postgres",
    url,
    poolSize: 4,
    statementTimeoutMs: 600_000,
    connectTimeoutMs: 5_000,
  });
  await migrate(database.db);
  await loadFixture(createStores(database.db), benchFixture(), new Date());
  await bulkGenerate(database.db, 0, size, console.log);
  await scorecardDataset(database.db, console.log);
  await dashboardDataset(database.db, console.log);
  await database.close();
  console.log(`${NAME}: ${url}`);
}
