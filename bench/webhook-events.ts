/**
 * What the producer of report.missing / report.late / kpi.missed costs (issue 21, item 3), on
 * the scorecard part of the benchmark's dataset: 20 market makers x 20 obligation markets, a
 * year of reports (bench/scorecards.ts). Not part of `npm run bench`; run it on its own:
 *
 *   node --import tsx bench/webhook-events.ts                      (in-memory PGlite)
 *   DATABASE_URL=postgres://… node --import tsx bench/webhook-events.ts   (an empty database)
 *
 * It times producer passes with the clock set: a first run, one deadline (400 market-days),
 * a two-day catch-up after downtime, 12,000 report versions (corrections of the last 30 days;
 * only the days since notifications started are judged) and one changed obligation period.
 */
import { sql } from "kysely";
import { loadConfig } from "../src/config.js";
import { addDays, utcDate } from "../src/domain/dates.js";
import { createWebhookEventProducer } from "../src/jobs/webhook-event-producer.js";
import { loadFixture } from "../src/services/fixtures.js";
import { openDatabase } from "../src/store/database.js";
import { migrate } from "../src/store/migrate.js";
import { createStores } from "../src/store/stores.js";
import { benchFixture } from "./data.js";
import { makerId, SCORECARD_COIN, scorecardDataset } from "./scorecards.js";

const log = (line: string) => process.stdout.write(`${line}\n`);
const config = loadConfig({ DATABASE_URL: "memory://", ...process.env });
const database = await openDatabase(config.database);
try {
  await migrate(database.db);
  const stores = createStores(database.db);
  await loadFixture(stores, benchFixture(), new Date());
  await scorecardDataset(database.db, log);
  await sql`insert into webhooks (id, organization_id, url, events, secret)
    values (gen_random_uuid(), ${makerId(0)}, 'https://example.com/hook', '{*}', 'whsec_x'),
      (gen_random_uuid(), 'bench-project', 'https://example.com/hook', '{*}', 'whsec_x')`.execute(
    database.db,
  );
  const today = utcDate(new Date());
  const at = (daysBefore: number, time: string) =>
    new Date(`${addDays(today, -daysBefore)}T${time}Z`);
  const producer = createWebhookEventProducer(stores, {
    deadlineUtc: "12:00",
    pollMs: 60_000,
    now: () => new Date(),
  });
  const timed = async (name: string, clock: Date, before?: () => Promise<void>) => {
    await before?.();
    const started = performance.now();
    const recorded = await producer.runOnce(clock);
    log(`  ${name}: ${(performance.now() - started).toFixed(0)} ms, ${recorded} events`);
  };
  await timed("first run (marker only)", at(4, "13:00:00"));
  await timed("one deadline, 400 market-days", at(3, "13:00:00"));
  await timed("nothing to do", at(3, "13:05:00"));
  await timed("catch-up of two deadlines after downtime", at(1, "13:00:00"));
  await timed("12,000 report versions (30 days x 400 markets)", at(1, "13:10:00"), async () => {
    await sql`insert into report_versions (report_id, submission_id, schema_version,
        bid_depth_50, bid_depth_100, bid_depth_200, ask_depth_50, ask_depth_100, ask_depth_200,
        bid_ask_depth_50, bid_ask_depth_100, bid_ask_depth_200, bid_ask_spread,
        order_fill_volume_maker, order_fill_volume_taker)
      select id, gen_random_uuid(), schema_version, bid_depth_50, bid_depth_100, bid_depth_200,
        ask_depth_50, ask_depth_100, ask_depth_200, bid_ask_depth_50, bid_ask_depth_100,
        bid_ask_depth_200, bid_ask_spread, order_fill_volume_maker, order_fill_volume_taker
      from reports where base_coin_id = ${SCORECARD_COIN} and date > ${addDays(today, -31)}::date
      order by id`.execute(database.db);
  });
  await timed("one obligation period changed (tighter KPIs)", at(1, "13:20:00"), async () => {
    await sql`update obligations set min_bid_depth_200 = 65000
      where organization_id = ${makerId(0)} and until is null`.execute(database.db);
  });
} finally {
  await database.close();
}
