/**
 * `npm run bench:ingest-parts [-- ROUNDS]`: where the store statement's database time goes
 * (issue 19 goal 1). On a fresh PostgreSQL database with the bench fixture, batches of 300 new
 * keys go through the service's own upsert (4 clients) as it is and with one part taken out
 * at a time: the version rows, the month-count delta, the public-depth lookup, all three; then the
 * plain-table `unnest` upsert. The variants interleave round by round, so that a busy machine
 * or a growing table weighs on each alike. The parts are removed by rewriting the statement's
 * text: a rewrite that no longer matches it fails the run instead of measuring the whole.
 */
import { randomUUID } from "node:crypto";
import { CompiledQuery, type Kysely } from "kysely";
import { loadConfig } from "../src/config.js";
import type { Report } from "../src/domain/report.js";
import { loadFixture } from "../src/services/fixtures.js";
import { openDatabase } from "../src/store/database.js";
import { migrate } from "../src/store/migrate.js";
import { createStores } from "../src/store/stores.js";
import type { Tables } from "../src/store/tables.js";
import { adminQuery, databaseUrl } from "./admin-database.js";
import { benchFixture, INGEST_ORG, v2Batch } from "./data.js";
import { asReports, plainUnnestUpsert, storeUpsert } from "./store-direct.js";

const ROUNDS = Number(process.argv[2] ?? 3);
const BATCHES = 120;

/** Each variant's rewrite of the upsert statement; each must change it. */
const rewrites: Record<string, RegExp[]> = {
  "no version rows": [/versions as \(\s*insert into report_versions[\s\S]*?from upserted\s*\),/],
  "no month-count delta": [
    /counted as \(\s*insert into report_month_count_deltas[\s\S]*?having count\(\*\) > 0\s*\),/,
  ],
  "no public-depth lookup": [/coalesce\(\(select case when t\.bid_depth_200[\s\S]*?limit 1\), 0\)/],
};
rewrites["none of the three"] = Object.values(rewrites).flat();

const replacement = (pattern: RegExp) =>
  // The lookup is the only use of $8: keep it typed.
  pattern.source.startsWith("coalesce") ? "(case when $8::float8 is null then 0 else 0 end)" : "";

function rewriting(db: Kysely<Tables>, patterns: RegExp[]): Kysely<Tables> {
  const rewrite = (text: string) =>
    patterns.reduce((out, pattern) => {
      const next = out.replace(pattern, replacement(pattern));
      if (next === out && /insert into reports/.test(out))
        throw new Error(`the rewrite ${pattern} no longer matches the upsert`);
      return next;
    }, text);
  return new Proxy(db, {
    get(target, property) {
      if (property === "executeQuery")
        return (query: CompiledQuery) =>
          target.executeQuery(CompiledQuery.raw(rewrite(query.sql), [...query.parameters]));
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

const name = `tr_bench_parts_${randomUUID().slice(0, 8)}`;
await adminQuery(`create database ${name}`);
const url = databaseUrl(name);
const database = await openDatabase(loadConfig({ DATABASE_URL: url }).database);
try {
  await migrate(database.db);
  await loadFixture(createStores(database.db), benchFixture(), new Date());
  type Run = (db: Kysely<Tables>, batches: Report[][]) => Promise<{ elapsedMs: number }>;
  const variants: Record<string, Run> = {
    "service statement": (db, batches) => storeUpsert(db, INGEST_ORG, batches, 4),
    ...Object.fromEntries(
      Object.entries(rewrites).map(([label, patterns]) => [
        label,
        ((db, batches) => storeUpsert(rewriting(db, patterns), INGEST_ORG, batches, 4)) as Run,
      ]),
    ),
    "plain-table unnest": (db, batches) => plainUnnestUpsert(db, INGEST_ORG, batches, 4),
  };
  const rates: Record<string, number[]> = {};
  let offset = 10_000_000;
  for (let round = 0; round < ROUNDS; round++) {
    for (const [label, run] of Object.entries(variants)) {
      const batches = Array.from({ length: BATCHES }, (_, b) => asReports(v2Batch(b, 300, offset)));
      offset += 1_000_000;
      const { elapsedMs } = await run(database.db, batches);
      rates[label] = [...(rates[label] ?? []), Math.round((BATCHES * 300) / (elapsedMs / 1000))];
    }
  }
  const plain = rates["plain-table unnest"] ?? [];
  console.log(`records/s per round (${BATCHES} batches of 300 new keys, 4 clients):`);
  for (const [label, list] of Object.entries(rates)) {
    const ratios = list.map((r, i) => (r / (plain[i] ?? r)).toFixed(2));
    console.log(`  ${label.padEnd(24)} ${list.join(", ")}  (/ plain: ${ratios.join(", ")})`);
  }
} finally {
  await database.close();
  await adminQuery(`drop database ${name} with (force)`);
}
