/**
 * Submit a JSON file of v2 reports with the typed client (`trading-reports/client`):
 *
 *   TRADING_REPORTS_URL=http://127.0.0.1:8080 TRADING_REPORTS_API_KEY=<key> \
 *     npx tsx examples/submit.ts [FILE] [--batch-size N]
 *
 * The same steps as submit.py: batches of at most 300, a dry run of every batch first (any
 * problem: printed with its path in the file, nothing stored, exit 1), then the real
 * submission, each batch with an Idempotency-Key made from the SHA-256 of its body and kept
 * for all its retries, so that a batch whose answer was lost is answered from its kept 201,
 * never stored twice. Only a 409, 429, 503 (after Retry-After) and a lost connection or
 * timeout are retried; a 400, 401, 403, 413 or 422 would only fail again. A batch answered
 * from its kept 201 (`idempotent-replayed: true`) was stored by an earlier run: counted apart,
 * as nothing changed. The request and response types come from the service's OpenAPI document.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { createReportsClient, type V2Record } from "trading-reports/client";

const MAX_BATCH = 300;
const RETRIES = 3;
const RETRIED = [409, 429, 503];

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
let document: V2Record[] | { data: V2Record[] };
try {
  document = JSON.parse(readFileSync(file, "utf8"));
} catch (error) {
  console.error(`cannot read ${file}: ${(error as Error).message}`);
  process.exit(2);
}
const records = Array.isArray(document) ? document : document.data;
const batches: { offset: number; data: V2Record[] }[] = [];
for (let offset = 0; offset < records.length; offset += batchSize) {
  batches.push({ offset, data: records.slice(offset, offset + batchSize) });
}

/**
 * One batch, retried on 409, 429 and 503 after Retry-After seconds (else 1, 2, 4 s) and when
 * no answer came (a lost connection, 60 s without an answer), always with the same request.
 * Returns openapi-fetch's answer with `replayed` (the 201 is the kept answer of an earlier
 * run's identical batch; one replayed to a retry after this call's own answer was lost is this
 * call's), or `{ what }` (why) when no answer came at all.
 */
async function submit(data: V2Record[], dryRun: boolean) {
  // The key is the body's digest (the client sends JSON.stringify of it); a dry run needs none.
  const digest = createHash("sha256").update(JSON.stringify({ data })).digest("hex");
  const header = dryRun
    ? { "x-dry-run": "true" }
    : { "x-dry-run": "false", "idempotency-key": `submit-ts-v2-${digest}` };
  let lost = false;
  for (let attempt = 0; ; attempt++) {
    let what: string;
    let seconds = 2 ** attempt;
    try {
      const answer = await client.POST("/api/v2/report", {
        params: { header },
        body: { data },
        signal: AbortSignal.timeout(60_000),
      });
      const { status, headers } = answer.response;
      const replayed = headers.get("idempotent-replayed") === "true" && !lost;
      if (!RETRIED.includes(status) || attempt === RETRIES) return { ...answer, replayed };
      seconds = retryAfterSeconds(headers.get("retry-after")) ?? seconds;
      what = `HTTP ${status}`;
    } catch (error) {
      const cause = (error as Error).cause ?? error;
      what = `no answer (${(cause as Error).message})`;
      lost = true;
      if (!dryRun) what += ": the batch may or may not be stored";
      if (attempt === RETRIES) return { what };
    }
    console.error(`${what}; retrying in ${seconds} s`);
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

function stop(message: string): never {
  console.error(message);
  process.exit(1);
}

// Dry run: every batch is validated before any is stored.
const problems: string[] = [];
for (const batch of batches) {
  const answer = await submit(batch.data, true);
  if ("what" in answer) stop(`${answer.what}; nothing stored`);
  const { data, error, response } = answer;
  if (response.status === 400 && error !== undefined && Array.isArray(error.message)) {
    for (const problem of error.message) {
      // data.<i>.<field> of the batch -> the record's path in the whole file.
      const path = problem.path?.replace(/^data\.(\d+)/, (_, i) => `data.${batch.offset + +i}`);
      problems.push(`${path ?? "(batch)"}: ${problem.message}`);
    }
  } else if (data === undefined) stop(`HTTP ${response.status}: ${JSON.stringify(error)}`);
}
if (problems.length > 0) {
  for (const problem of problems) console.log(problem);
  stop(`${problems.length} problem(s); nothing stored`);
}

let [created, updated, replayedBatches, replayedRecords] = [0, 0, 0, 0];
for (const [number, batch] of batches.entries()) {
  const answer = await submit(batch.data, false);
  if ("what" in answer || answer.data === undefined) {
    // Say what is stored: the batches before this one; this one only if it may have been.
    const status = "what" in answer ? undefined : answer.response.status;
    console.error(
      "what" in answer ? answer.what : `HTTP ${status}: ${JSON.stringify(answer.error)}`,
    );
    const before = `records 0-${batch.offset - 1}`;
    if (number === 1) console.error(`batch 1 (${before}) was stored`);
    if (number > 1) console.error(`batches 1-${number} (${before}) were stored`);
    if (status === undefined || status >= 500)
      console.error(`batch ${number + 1} may or may not be stored`);
    stop(
      "running this again is safe: stored batches are answered from their kept 201 (Idempotency-Key), not stored twice",
    );
  }
  if (answer.replayed) {
    // Stored by an earlier run: its counts are that run's, and nothing changed now.
    replayedBatches += 1;
    replayedRecords += batch.data.length;
    continue;
  }
  created += answer.data.createdCount;
  updated += answer.data.updatedCount;
}
const replays = replayedBatches
  ? `; ${replayedBatches} batch(es) (${replayedRecords} records) already stored by an earlier run (answers replayed): nothing changed`
  : "";
console.log(
  `created ${created}, updated ${updated} (${records.length} records, ${batches.length} batches)${replays}`,
);
