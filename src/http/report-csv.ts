import { type ReportCsvItem, reportItemSchema } from "../schemas/report.js";

/**
 * The listing item's fields in their order, with `instrumentType` before `type` (as in a v2
 * record): with both, an exported file is a valid submission of its v2 reports.
 */
const COLUMNS: (keyof ReportCsvItem)[] = Object.keys(reportItemSchema.shape).flatMap((name) =>
  name === "type" ? ["instrumentType", "type"] : [name],
) as (keyof ReportCsvItem)[];

/** CSV lines (RFC 4180, header row first) for the report items, chunk by chunk. */
export async function* reportCsv(
  first: IteratorResult<ReportCsvItem[]>,
  rest: AsyncIterator<ReportCsvItem[]>,
): AsyncGenerator<string> {
  yield `${COLUMNS.join(",")}\r\n`;
  for (let chunk = first; !chunk.done; chunk = await rest.next()) {
    yield chunk.value.map((item) => `${COLUMNS.map((c) => cell(item[c])).join(",")}\r\n`).join("");
  }
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
