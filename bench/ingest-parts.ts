/**
 * `npm run bench:ingest-parts [-- ROUNDS [WORD ...]]`: where the store statement's database time goes
 * (issue 19 goal 1). Batches of 300 new keys go through the service's own upsert (4 clients):
 * as it is (prepared once per connection, as the service sends it), unnamed (parsed and
 * planned for every batch, as with DB_PREPARED_STATEMENTS=false), with one part taken out at
 * a time (the version rows, the month-count delta, the public-depth lookup, all three), with
 * the schema changes the issue suggests measuring (history as one row per batch, an integer
 * organization key in the indexes, version ids without a b-tree, no listing indexes), two
 * other storage designs (monthly partitions, the metrics in a side table), the leanest schema
 * that still keeps every version, the service's batches one or two at a time (a write gate), the
 * batches of concurrent requests merged into fewer, larger statements, the statement without
 * `ON CONFLICT`, batches written by binary `COPY`
 * (copy-pipeline.ts), and then the plain-table `unnest` upsert. Each variant runs on a fresh
 * database of its own, and each phase starts with a batch a client that is not measured; the
 * variants interleave round by round, so that a busy machine or a growing table weighs on
 * each alike. Besides records/s, each phase reports the CPU that the PostgreSQL processes
 * spent per record, which swings less than throughput on a shared machine.
 *
 * The parts are removed by rewriting the statement's text: a rewrite that no longer matches
 * it fails the run instead of measuring the whole.
 */
import { createHash, randomUUID } from "node:crypto";
import { CompiledQuery, type Kysely, sql } from "kysely";
import pg from "pg";
import { loadConfig } from "../src/config.js";
import { METRICS, type Report } from "../src/domain/report.js";
import { loadFixture } from "../src/services/fixtures.js";
import { type Database, openDatabase } from "../src/store/database.js";
import { migrate } from "../src/store/migrate.js";
import { metricColumn, RECORD_KEY_COLUMNS } from "../src/store/report-store.js";
import { createStores } from "../src/store/stores.js";
import type { Tables } from "../src/store/tables.js";
import { adminQuery, databaseUrl } from "./admin-database.js";
import { copyNewKeys } from "./copy-pipeline.js";
import { benchFixture, DAYS, FIRST_DATE, INGEST_ORG, v2Batch } from "./data.js";
import { postgresCpuMeter } from "./proc-cpu.js";
import { median } from "./server.js";
import { asReports, plainUnnestUpsert, storeUpsert } from "./store-direct.js";

const ROUNDS = Number(process.argv[2] ?? 3);
/** Only the variants whose label holds one of these words (and the plain statement), if any. */
const ONLY = process.argv.slice(3);
const chosen = (label: string, variant: Variant) =>
  ONLY.length === 0 || variant.plain === true || ONLY.some((word) => label.includes(word));
const BATCHES = 120;

type Rewrite = [
  pattern: RegExp,
  replacement: string | ((match: string, ...groups: string[]) => string),
];
type Variant = {
  /** The statement sent unnamed, parsed and planned for every batch (the others are prepared). */
  unnamed?: true;
  /** Rewrites of the service's upsert statement; each must match it. */
  rewrites?: Rewrite[];
  /** Statements run on this variant's own fresh database after the migrations. */
  schema?: string[];
  /** The plain-table `unnest` upsert instead of the service's statement. */
  plain?: true;
  /**
   * The round's records in batches of this many, from `clients` at once (default 300 and 4):
   * what the service would send if it merged the batches of concurrent requests.
   */
  merged?: { batchSize: number; clients: number };
  /** Batches of new keys written by binary COPY (copy-pipeline.ts), the versions or not. */
  copy?: { versions: boolean };
};

const VERSIONS_CTE =
  /versions as \(\s*insert into report_versions \(report_id, submission_id, recorded_at, ([^)]*)\)\s*select[\s\S]*?from upserted\s*\),/;
const noVersions: Rewrite = [VERSIONS_CTE, ""];
const noMonthCounts: Rewrite = [
  /counted as \(\s*insert into report_month_count_deltas[\s\S]*?having count\(\*\) > 0\s*\),/,
  "",
];
// The lookup is the only use of $8: keep it typed.
// A plain insert: no speculative insertion, but a key already stored fails the whole batch.
const noOnConflict: Rewrite = [
  /on conflict \(organization_id[\s\S]*?updated_at = \$6::timestamptz\n/,
  "\n",
];
const noPublicDepth: Rewrite = [
  /coalesce\(\(select case when t\.bid_depth_200[\s\S]*?limit 1\), 0\)/,
  "(case when $8::float8 is null then 0 else 0 end)",
];

/**
 * History as one row per batch: every accepted version of the batch in one row of arrays,
 * one array per column. What it costs to write; finding one report's versions in it would
 * need an index of its own, not measured here.
 */
const versionBatchColumns = [
  "quote_coin_id text[]",
  "quote_coin_symbol text[]",
  "type text[]",
  "schema_version smallint[]",
  ...METRICS.map((m) => `${metricColumn(m)} double precision[]`),
  "quality_flags smallint[]",
];
const versionsPerBatch: Variant = {
  schema: [
    `create table bench_version_batches (id bigint generated always as identity primary key,
      submission_id uuid not null, recorded_at timestamptz not null, report_ids bigint[] not null,
      ${versionBatchColumns.join(", ")})`,
  ],
  rewrites: [
    [
      VERSIONS_CTE,
      (_, columns = "") => {
        const names = columns.split(",").map((c) => c.trim());
        return `versions as (
          insert into bench_version_batches (submission_id, recorded_at, report_ids, ${names.join(", ")})
          select $4::uuid, $6::timestamptz, array_agg(id), ${names.map((c) => `array_agg(${c})`).join(", ")}
          from upserted
        ),`;
      },
    ],
  ],
};

/** The three `reports` indexes led by an integer organization key instead of the text id. */
const reportIndexes = (organization: string) => [
  "drop index reports_key_idx",
  "drop index reports_base_coin_idx",
  "drop index reports_exchange_idx",
  `create unique index reports_key_idx on reports
    (${organization}, date desc, exchange_id, base_coin_id, quote_key, instrument_type) include (id)`,
  `create index reports_base_coin_idx on reports
    (${organization}, base_coin_id, date desc, exchange_id, quote_key, instrument_type) include (id)`,
  `create index reports_exchange_idx on reports
    (${organization}, exchange_id, date desc, base_coin_id, quote_key, instrument_type) include (id)`,
];
const integerOrganizationKey: Variant = {
  schema: [
    "alter table reports add column organization_key integer not null default 0",
    ...reportIndexes("organization_key"),
  ],
  rewrites: [
    [
      /insert into reports as r \(organization_id,([\s\S]*?)\)\s*select \$1::text,/,
      (_, columns = "") =>
        `insert into reports as r (organization_key, organization_id,${columns}) select 1, $1::text,`,
    ],
    [/on conflict \(organization_id,/, "on conflict (organization_key,"],
  ],
};

/**
 * `reports` partitioned by month (range on `date`, which every key carries), so that each
 * partition's indexes stay small. PostgreSQL 15 allows no identity column on a partitioned
 * table, so ids come from a sequence; the id b-tree cannot be unique without the date, and
 * a partitioned table returns no `xmax`.
 */
const monthlyPartitions: Variant = {
  schema: [
    "alter table reports rename to reports_whole",
    ...["key", "base_coin", "exchange"].map(
      (i) => `alter index reports_${i}_idx rename to reports_whole_${i}_idx`,
    ),
    "create sequence reports_monthly_id_seq",
    `create table reports (like reports_whole including defaults including constraints)
      partition by range (date)`,
    "alter table reports alter column id set default nextval('reports_monthly_id_seq')",
    `do $$ declare m date := '${FIRST_DATE}'; begin
      while m < date '${FIRST_DATE}' + ${DAYS + 31} loop
        execute format('create table %I partition of reports for values from (%L) to (%L)
          with (fillfactor = 90)', 'reports_' || to_char(m, 'YYYY_MM'), m, m + interval '1 month');
        m := m + interval '1 month';
      end loop;
    end $$`,
    ...reportIndexes("organization_id").filter((s) => !s.startsWith("drop")),
    "create index reports_id_idx on reports (id)",
  ],
  // A partitioned table returns no system column: a row is new when created in this statement.
  rewrites: [[/\(r\.xmax = 0\) as created/, "(r.created_at = $6::timestamptz) as created"]],
};

const metricNames = METRICS.map(metricColumn);
/**
 * A narrower `reports`: the metrics in a side table keyed by report id, written by the same
 * statement (joined back to the input by the record key, since the side table needs the id).
 */
const metricsInSideTable: Variant = {
  schema: [
    `create table report_metrics (report_id bigint primary key,
      ${metricNames.map((c) => `${c} double precision`).join(", ")}) with (fillfactor = 90)`,
    ...metricNames.map((c) => `alter table reports drop column ${c}`),
  ],
  rewrites: [
    [
      /upserted as \(\s*insert into reports[\s\S]*?from upserted\s*\),/,
      () => {
        const keys = RECORD_KEY_COLUMNS.join(", ");
        const narrow = ["quote_coin_id", "quote_coin_symbol", "type"];
        const stored = [...narrow, "schema_version", "eligibility_status", "eligibility_reason"];
        return `upserted as (
    insert into reports as r (organization_id, ${keys}, ${narrow.join(", ")}, schema_version,
      eligibility_status, eligibility_reason, quality_flags, created_at, updated_at)
    select $1::text, ${keys}, ${narrow.join(", ")}, $2::smallint, eligibility_status,
      eligibility_reason, quality_flags, $6::timestamptz, $6::timestamptz
    from input
    on conflict (organization_id, ${keys}) do update set
      ${[...stored, "quality_flags"].map((c) => `${c} = excluded.${c}`).join(", ")},
      updated_at = $6::timestamptz
    returning r.id, (r.xmax = 0) as created, ${keys}, r.quality_flags
  ),
  joined as materialized (
    select u.id, u.created, u.quality_flags, ${narrow.map((c) => `i.${c}`).join(", ")},
      ${metricNames.map((c) => `i.${c}`).join(", ")}
    from upserted u join input i using (${keys})
  ),
  metrics as (
    insert into report_metrics as m (report_id, ${metricNames.join(", ")})
    select id, ${metricNames.join(", ")} from joined
    on conflict (report_id) do update set
      ${metricNames.map((c) => `${c} = excluded.${c}`).join(", ")}
  ),
  versions as (
    insert into report_versions (report_id, submission_id, recorded_at, ${narrow.join(", ")},
      schema_version, ${metricNames.join(", ")}, quality_flags)
    select id, $4::uuid, $6::timestamptz, ${narrow.join(", ")}, $2::smallint,
      ${metricNames.join(", ")}, quality_flags from joined
  ),`;
      },
    ],
  ],
};

/**
 * What the schema could save at most while every accepted version is kept and both listing
 * filters keep their index: a new key's first version is the report itself (no version row
 * until the key changes; every batch here is of new keys) and an integer organization key.
 */
const leanestKept: Variant = {
  schema: integerOrganizationKey.schema,
  rewrites: [noVersions, ...(integerOrganizationKey.rewrites ?? [])],
};

const variants: Record<string, Variant> = {
  "service statement": {},
  "service statement, unnamed": { unnamed: true },
  "no version rows": { rewrites: [noVersions] },
  "no month-count delta": { rewrites: [noMonthCounts] },
  "no public-depth lookup": { rewrites: [noPublicDepth] },
  "none of the three": { rewrites: [noVersions, noMonthCounts, noPublicDepth] },
  "versions: a row per batch": versionsPerBatch,
  "integer organization key": integerOrganizationKey,
  "version ids: BRIN, not b-tree": {
    schema: [
      "alter table report_versions drop constraint report_versions_pkey",
      "create index report_versions_id_brin on report_versions using brin (id)",
    ],
  },
  "no exchange-filter index": { schema: ["drop index reports_exchange_idx"] },
  "monthly partitions": monthlyPartitions,
  "metrics in a side table": metricsInSideTable,
  "first version in reports + integer organization key": leanestKept,
  "four requests' batches merged: 1,200 a statement, one at a time": {
    merged: { batchSize: 1200, clients: 1 },
  },
  "the service's batches of 300, one at a time": { merged: { batchSize: 300, clients: 1 } },
  "the service's batches of 300, two at a time": { merged: { batchSize: 300, clients: 2 } },
  "two requests' batches merged: 600 a statement, two at a time": {
    merged: { batchSize: 600, clients: 2 },
  },
  "no ON CONFLICT: a plain insert (new keys only)": { rewrites: [noOnConflict] },
  "binary COPY of reports and versions (new keys only)": { copy: { versions: true } },
  "binary COPY of reports alone (new keys only, no version rows)": { copy: { versions: false } },
  "no listing indexes": {
    schema: ["drop index reports_base_coin_idx", "drop index reports_exchange_idx"],
  },
  "plain-table unnest": { plain: true },
};

/**
 * While set, the pg driver sends the upsert, rewritten or not, as a named statement, as the
 * service does its own (prepared-statements.ts; the databases here are opened without it, so
 * that the rewritten texts are named alike). The plain-table statement stays unnamed, as in
 * `npm run bench`.
 */
let preparing = false;
const unnamedQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const [text, values] = args;
  if (preparing && typeof text === "string" && text.includes("insert into reports")) {
    const name = `bench_${createHash("sha1").update(text).digest("hex").slice(0, 16)}`;
    return unnamedQuery.call(this, { name, text, values });
  }
  return unnamedQuery.apply(this, args);
} as typeof pg.Client.prototype.query;

function rewriting(db: Kysely<Tables>, rewrites: Rewrite[]): Kysely<Tables> {
  const rewrite = (text: string) =>
    rewrites.reduce((out, [pattern, replacement]) => {
      const next = out.replace(pattern, replacement as string);
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

const opened: { name: string; database: Database }[] = [];
const copyPools = new Map<string, pg.Pool>();
/** The COPY variants' pool of database `name`, kept for the whole run like the others'. */
function copyPool(name: string): pg.Pool {
  let pool = copyPools.get(name);
  if (pool === undefined) {
    pool = new pg.Pool({ connectionString: databaseUrl(name), max: 4, idleTimeoutMillis: 0 });
    copyPools.set(name, pool);
  }
  return pool;
}
async function freshDatabase(schema: string[] = []): Promise<{ name: string; db: Kysely<Tables> }> {
  const name = `tr_bench_parts_${randomUUID().slice(0, 8)}`;
  await adminQuery(`create database ${name}`);
  const database = await openDatabase(
    loadConfig({ DATABASE_URL: databaseUrl(name), DB_PREPARED_STATEMENTS: "false" }).database,
  );
  opened.push({ name, database });
  await migrate(database.db);
  await loadFixture(createStores(database.db), benchFixture(), new Date());
  for (const statement of schema) await sql.raw(statement).execute(database.db);
  return { name, db: database.db };
}

try {
  const runs: [
    string,
    string,
    Variant["merged"],
    (batches: Report[][]) => Promise<{ elapsedMs: number }>,
  ][] = [];
  for (const [label, variant] of Object.entries(variants)) {
    if (!chosen(label, variant)) continue;
    const { name, db } = await freshDatabase(variant.schema);
    const clients = variant.merged?.clients ?? 4;
    const copy = variant.copy;
    runs.push([
      label,
      name,
      variant.merged,
      variant.plain
        ? (batches) => plainUnnestUpsert(db, INGEST_ORG, batches, 4)
        : copy
          ? (batches) => copyNewKeys(copyPool(name), INGEST_ORG, batches, 4, copy.versions)
          : async (batches) => {
              preparing = variant.unnamed !== true;
              try {
                return await storeUpsert(
                  rewriting(db, variant.rewrites ?? []),
                  INGEST_ORG,
                  batches,
                  clients,
                );
              } finally {
                preparing = false;
              }
            },
    ]);
  }
  const rates: Record<string, number[]> = {};
  const cpu: Record<string, number[]> = {};
  // Every variant has a database of its own, so each round gives each the same new keys: the
  // measured ones, then 10,000 more for the warm-up (the key space repeats every 5.84 M).
  const ROUND_KEYS = BATCHES * 300 + 10_000;
  for (let round = 0; round < ROUNDS; round++) {
    for (const [label, name, merged, run] of runs) {
      const size = merged?.batchSize ?? 300;
      const batches = Array.from({ length: (BATCHES * 300) / size }, (_, b) =>
        asReports(v2Batch(b, size, round * ROUND_KEYS)),
      );
      // A batch a client first, not measured: a pool idle since the variant's last round has
      // closed its connections (after 10 s), and a new backend's start and first plans would
      // fall on this phase alone.
      const warmUp = (round + 1) * ROUND_KEYS - 10_000;
      await run(Array.from({ length: 4 }, (_, b) => asReports(v2Batch(b, size, warmUp))));
      // A checkpoint now rather than in the middle of some phase.
      await adminQuery("checkpoint");
      const meter = postgresCpuMeter(name);
      const { elapsedMs } = await run(batches);
      const records = BATCHES * 300;
      rates[label] = [...(rates[label] ?? []), Math.round(records / (elapsedMs / 1000))];
      cpu[label] = [...(cpu[label] ?? []), (meter.seconds() * 1e6) / records];
    }
  }
  const plainRates = rates["plain-table unnest"] ?? [];
  const plainCpu = median(cpu["plain-table unnest"] ?? []);
  console.log(
    `${BATCHES * 300} new keys a round, in batches of 300 from 4 clients unless named; PostgreSQL CPU per record:`,
  );
  console.log(
    "| statement | records/s per round | / plain per round | PostgreSQL µs/record (median) | / plain |",
  );
  console.log("|---|---|---|---:|---:|");
  for (const [label, list] of Object.entries(rates)) {
    const ratios = list.map((r, i) => (r / (plainRates[i] ?? r)).toFixed(2));
    const us = median(cpu[label] ?? []);
    console.log(
      `| ${label} | ${list.join(", ")} | ${ratios.join(", ")} | ${us.toFixed(1)} | ${(us / plainCpu).toFixed(2)} |`,
    );
  }
} finally {
  for (const pool of copyPools.values()) await pool.end();
  for (const { name, database } of opened) {
    await database.close();
    await adminQuery(`drop database ${name} with (force)`);
  }
}
