import { type ReportItem, reportItemSchema } from "../schemas/report.js";

const COLUMNS = Object.keys(reportItemSchema.shape) as (keyof ReportItem)[];

/** CSV lines (RFC 4180, header row first) for the report items, chunk by chunk. */
export async function* reportCsv(
  first: IteratorResult<ReportItem[]>,
  rest: AsyncIterator<ReportItem[]>,
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
