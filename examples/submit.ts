/**
 * Submit a JSON file of v2 reports with the typed client (`trading-reports/client`):
 *
 *   TRADING_REPORTS_URL=http://127.0.0.1:8080 TRADING_REPORTS_API_KEY=<key> \
 *     npx tsx examples/submit.ts [FILE] [--batch-size N]
 *
 * The same steps as submit.py: batches of at most 300, a dry run of every batch first (any
 * problem: printed with its path in the file, nothing stored, exit 1), then the real
 * submission; a 429 or 503 is retried after the time its Retry-After header gives. The
 * request and response types come from the service's OpenAPI document.
 */
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { createReportsClient, type V2Record } from "trading-reports/client";

const MAX_BATCH = 300;
const RETRIES = 5;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { "batch-size": { type: "string", default: String(MAX_BATCH) } },
});
const file = positionals[0] ?? new URL("reports.json", import.meta.url).pathname;
const batchSize = Number(values["batch-size"]);
const key = process.env.TRADING_REPORTS_API_KEY;
if (!key || !Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH) {
  console.error(`set TRADING_REPORTS_API_KEY; --batch-size is from 1 to ${MAX_BATCH}`);
  process.exit(2);
}
const client = createReportsClient({
  url: process.env.TRADING_REPORTS_URL ?? "http://127.0.0.1:8080",
  key,
});

// The service checks every record (and says what is wrong), so the file is sent as it is.
const document = JSON.parse(readFileSync(file, "utf8")) as V2Record[] | { data: V2Record[] };
const records = Array.isArray(document) ? document : document.data;
const batches: { offset: number; data: V2Record[] }[] = [];
for (let offset = 0; offset < records.length; offset += batchSize) {
  batches.push({ offset, data: records.slice(offset, offset + batchSize) });
}

/** One batch, retried on 429 and 503 after Retry-After seconds (else 1, 2, 4, … s). */
async function submit(data: V2Record[], dryRun: boolean) {
  for (let attempt = 0; ; attempt++) {
    const answer = await client.POST("/api/v2/report", {
      params: { header: { "x-dry-run": dryRun ? "true" : "false" } },
      body: { data },
    });
    const { status, headers } = answer.response;
    if ((status !== 429 && status !== 503) || attempt === RETRIES) return answer;
    const seconds = retryAfterSeconds(headers.get("retry-after")) ?? 2 ** attempt;
    console.error(`HTTP ${status}; retrying in ${seconds} s`);
    await sleep(seconds * 1000);
  }
}

/** Retry-After in seconds or as an HTTP date; undefined when absent or unreadable. */
function retryAfterSeconds(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = /^\d+$/.test(header.trim())
    ? Number(header)
    : (Date.parse(header) - Date.now()) / 1000;
  return Number.isNaN(seconds) ? undefined : Math.max(0, Math.ceil(seconds));
}

function fail(status: number, error: unknown): never {
  console.error(`HTTP ${status}: ${JSON.stringify(error)}`);
  process.exit(1);
}

// Dry run: every batch is validated before any is stored.
const problems: string[] = [];
for (const batch of batches) {
  const { error, response } = await submit(batch.data, true);
  if (response.status === 400 && error !== undefined && Array.isArray(error.message)) {
    for (const problem of error.message) {
      // data.<i>.<field> of the batch -> the record's path in the whole file.
      const path = problem.path?.replace(/^data\.(\d+)/, (_, i) => `data.${batch.offset + +i}`);
      problems.push(`${path ?? "(batch)"}: ${problem.message}`);
    }
  } else if (response.status !== 201) fail(response.status, error);
}
if (problems.length > 0) {
  for (const problem of problems) console.log(problem);
  console.error(`${problems.length} problem(s); nothing stored`);
  process.exit(1);
}

let [created, updated] = [0, 0];
for (const batch of batches) {
  const { data, error, response } = await submit(batch.data, false);
  if (data === undefined) fail(response.status, error);
  created += data.createdCount;
  updated += data.updatedCount;
}
console.log(
  `created ${created}, updated ${updated} (${records.length} records, ${batches.length} batches)`,
);
