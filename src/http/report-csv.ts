import { Readable } from "node:stream";
import { setImmediate as nextTurn } from "node:timers/promises";
import { csvCell } from "../domain/csv-cell.js";
import {
  type ReportCsvItem,
  reportItemSchema,
  reportOrganizationShape,
  type ScopedReportCsvItem,
} from "../schemas/report.js";

/**
 * The listing item's fields in their order, with `instrumentType` before `type` (as in a v2
 * record): with both, an exported file is a valid submission of its v2 reports.
 */
export const REPORT_CSV_COLUMNS: (keyof ReportCsvItem)[] = Object.keys(
  reportItemSchema.shape,
).flatMap((name) =>
  name === "type" ? ["instrumentType", "type"] : [name],
) as (keyof ReportCsvItem)[];

/** A project or operator key's export: the organization's id and name first, as in JSON. */
const SCOPED_COLUMNS: (keyof ScopedReportCsvItem)[] = [
  ...(Object.keys(reportOrganizationShape) as (keyof ScopedReportCsvItem)[]),
  ...REPORT_CSV_COLUMNS,
];

/**
 * The CSV body as a stream that reads the next chunk only once the client has taken the last
 * one: a client that stops reading stops the export (the idle timeout then ends it), rather
 * than have its whole export read from the database into memory (object streams buffer 16
 * chunks by default).
 */
export function reportCsvStream(
  first: IteratorResult<ReportCsvItem[]>,
  rest: AsyncIterator<ReportCsvItem[]>,
  acrossOrganizations = false,
  withQualityFlags = false,
): Readable {
  const listed = acrossOrganizations ? SCOPED_COLUMNS : REPORT_CSV_COLUMNS;
  const columns = withQualityFlags ? [...listed, "qualityFlags" as const] : listed;
  return Readable.from(reportCsv(first, rest, columns), { highWaterMark: 1 });
}

/**
 * CSV lines (RFC 4180, header row first) for the report items, chunk by chunk; text cells that
 * a spreadsheet would take for a formula are neutralised (csvCell).
 */
export async function* reportCsv(
  first: IteratorResult<ReportCsvItem[]>,
  rest: AsyncIterator<ReportCsvItem[]>,
  columns: readonly (keyof ScopedReportCsvItem)[] = REPORT_CSV_COLUMNS,
): AsyncGenerator<string> {
  yield headerRow(columns);
  for (let chunk = first; !chunk.done; chunk = await rest.next()) {
    yield rows(chunk.value, columns);
    // A client that reads fast (or a large socket buffer) would otherwise have the next chunk
    // fetched and written in the same turn of the event loop, chunk after chunk: with the
    // embedded database, which runs on this thread, no other request is served until the
    // export stalls. Waiting one turn lets them in between chunks.
    await nextTurn();
  }
}

const headerRow = (columns: readonly string[]) => `${columns.join(",")}\r\n`;

function rows(
  items: ReportCsvItem[],
  columns: readonly (keyof ScopedReportCsvItem)[] = REPORT_CSV_COLUMNS,
): string {
  return items
    .map((item) => `${columns.map((c) => csvCell((item as ScopedReportCsvItem)[c])).join(",")}\r\n`)
    .join("");
}

/** The whole CSV of a few items (the API reference's example). */
export function reportCsvText(items: ReportCsvItem[]): string {
  return headerRow(REPORT_CSV_COLUMNS) + rows(items);
}
