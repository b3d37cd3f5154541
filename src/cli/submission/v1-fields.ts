import { createReportsClient } from "../../client/index.js";
import type { Exchange } from "../../domain/reference-data.js";
import { v1InstrumentType } from "../../domain/routing.js";
import { v1RecordSchema, v2RecordSchema } from "../../schemas/report.js";
import { RecordFileError, type RecordSource } from "./read-records.js";

/**
 * The fields a v2 record has and a v1 record has not (the v2-only metrics, `instrumentType`
 * and `type`), from the two schemas. The v1 route ignores them: a v1 submission over a stored
 * v2 report nulls its v2 values, and files the record under the instrument type its exchange
 * implies (spot where the exchange has spot markets, else perp), whatever the file says.
 */
const V2_ONLY_FIELDS = Object.keys(v2RecordSchema.shape).filter(
  (field) => !Object.hasOwn(v1RecordSchema.shape, field),
);

/** Refused records named one by one; past these, counted. */
const MAX_LISTED = 10;

/** The exchanges could not be read, so `--v1`'s instrument types could not be checked. */
export class ExchangeLookupError extends Error {
  override name = "ExchangeLookupError";
}

type Lookup = { url: string; key: string; fetch?: typeof fetch };

/**
 * Refuses (RecordFileError, before anything is sent) a `--v1` file whose records carry what v1
 * would drop: a v2-only value (an exported v2 report: its `type`, its v2-only metrics), or an
 * `instrumentType` other than the one v1 gives the record's exchange. An exported v1 report
 * passes: empty `type` and v2-only metrics, and the instrument type v1 gave it. The exchanges
 * are read from the service only when some record names an instrument type.
 */
export async function refuseV2Fields(file: string, source: RecordSource, lookup: Lookup) {
  const refusals: string[] = [];
  const typed: number[] = [];
  source.records.forEach((record, index) => {
    const field = (name: string): unknown =>
      typeof record === "object" && record !== null ? Reflect.get(record, name) : undefined;
    const given = V2_ONLY_FIELDS.filter((name) => !isEmpty(field(name)));
    // `type` first: the column to split a mixed export by.
    const other = given.includes("type") ? "type" : given.find((n) => n !== "instrumentType");
    const instrumentType = field("instrumentType");
    const where = (name: string) => `${source.locate(index, name)}: ${name} ${show(field(name))}`;
    if (other !== undefined) refusals.push(`${where(other)} is a v2 field`);
    else if (instrumentType === "spot" || instrumentType === "perp") typed.push(index);
    else if (!isEmpty(instrumentType))
      refusals.push(`${where("instrumentType")} is neither spot nor perp`);
  });
  if (refusals.length === 0 && typed.length > 0) {
    const exchanges = await readExchanges(lookup);
    for (const index of typed) {
      const record = source.records[index] as Record<string, unknown>;
      const exchange = exchanges.get(String(record.exchangeId));
      // An exchange the service does not know: its answer names the problem.
      if (exchange === undefined || v1InstrumentType(exchange) === record.instrumentType) continue;
      refusals.push(
        `${source.locate(index, "instrumentType")}: instrumentType ${show(record.instrumentType)}, but v1 files a record of exchange '${exchange.id}' as ${v1InstrumentType(exchange)}`,
      );
    }
  }
  if (refusals.length === 0) return;
  const count = refusals.length === 1 ? "1 record holds" : `${refusals.length} records hold`;
  const listed = refusals.slice(0, MAX_LISTED);
  if (refusals.length > MAX_LISTED) listed.push(`… and ${refusals.length - MAX_LISTED} more`);
  throw new RecordFileError(
    `${file}: ${count} v2 data that --v1 would not send (the v1 route ignores it, and erases the v2 values of a report it replaces); nothing was sent\n${listed.join("\n")}\n` +
      "Submit v2 records without --v1. A mixed export: split it by its type column (empty type = v1) and submit the v1 rows with --v1, the others without.",
  );
}

const isEmpty = (value: unknown) => value === undefined || value === null || value === "";
const show = (value: unknown) => (typeof value === "string" ? `'${value}'` : JSON.stringify(value));

/** Every exchange of the service, by id (GET /api/v1/exchanges). */
async function readExchanges(lookup: Lookup): Promise<Map<string, Exchange>> {
  const client = createReportsClient(lookup);
  const failed = (reason: string) =>
    new ExchangeLookupError(
      `cannot read the service's exchanges to check the records' instrumentType against v1 (${reason}); nothing was sent`,
    );
  try {
    const { data, response } = await client.GET("/api/v1/exchanges", {
      signal: AbortSignal.timeout(60_000),
    });
    if (data === undefined) throw failed(`answer ${response.status}`);
    return new Map(data.items.map((exchange) => [exchange.id, exchange]));
  } catch (error) {
    if (error instanceof ExchangeLookupError) throw error;
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    throw failed(cause instanceof Error ? cause.message : String(cause));
  }
}
