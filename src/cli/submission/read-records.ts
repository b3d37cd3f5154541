import { isUtf8 } from "node:buffer";
import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import { parse } from "csv-parse/sync";
import { csvCellText } from "../../domain/csv-cell.js";
import { METRICS } from "../../domain/report.js";
import { lineIndex, recordOffsets } from "./json-offsets.js";

/** Records read from a submission file, with a way to point the user back at each one. */
export type RecordSource = {
  records: unknown[];
  /**
   * Where record `index` (zero-based) sits in the file: `line N`, or `record N` (one-based)
   * for JSON whose records do not each start on a line of their own. With `field`, JSON
   * points at the line of that field of the record (a CSV row is one line anyway).
   */
  locate: (index: number, field?: string) => string;
};

/** The file cannot be used as input (missing, unreadable, malformed): a usage error. */
export class RecordFileError extends Error {
  override name = "RecordFileError";
}

const NUMERIC_COLUMNS: ReadonlySet<string> = new Set(METRICS);
/** Plain decimal notation only: "0x10", "1_000" or "Infinity" stay strings for the server to judge. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Reads `FILE.csv` or `FILE.json` (by extension) into records ready for submission. */
export async function readRecords(file: string): Promise<RecordSource> {
  const extension = extname(file).toLowerCase();
  if (extension !== ".csv" && extension !== ".json") {
    throw new RecordFileError(`${file}: unsupported file type, expected .csv or .json`);
  }
  let content: Buffer;
  try {
    content = await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : code;
    throw new RecordFileError(`${file}: cannot read file (${reason ?? String(error)})`);
  }
  // Read as UTF-8, other bytes would become U+FFFD: a Latin-1 `é` in a symbol silently changed.
  if (!isUtf8(content))
    throw new RecordFileError(
      `${file}: not UTF-8 text; save it as UTF-8 (in Excel: "CSV UTF-8") and submit it again`,
    );
  return extension === ".csv" ? parseCsv(content, file) : parseJson(content.toString("utf8"), file);
}

/**
 * Header row = field names. Metric cells holding a plain decimal number become numbers; any
 * other metric cell stays a string so that the server names the problem. Empty cells are
 * left out so that v1 defaults apply.
 */
export function parseCsv(content: Buffer, file = "input"): RecordSource {
  let rows: Array<{ record: string[]; info: { bytes: number } }>;
  try {
    // With `info`, each row is `{ record, info }`; the typings only describe plain rows.
    rows = parse(content, {
      info: true,
      bom: true,
      trim: true,
      skip_empty_lines: true,
    }) as unknown as typeof rows;
  } catch (error) {
    throw new RecordFileError(`${file}: invalid CSV: ${(error as Error).message}`);
  }
  const [header, ...data] = rows;
  if (header === undefined)
    throw new RecordFileError(`${file}: empty CSV file, expected a header row`);
  const columns = header.record;
  checkDelimiter(columns, file);
  const seen = new Set<string>();
  for (const [position, name] of columns.entries()) {
    if (name === "") throw new RecordFileError(`${file}: header column ${position + 1} is empty`);
    if (seen.has(name)) throw new RecordFileError(`${file}: header column '${name}' appears twice`);
    seen.add(name);
  }

  const records = data.map(({ record }) => {
    const fields: Record<string, string | number> = {};
    for (const [position, cell] of record.entries()) {
      const name = columns[position];
      if (name === undefined || cell === "") continue;
      // Undo the export's formula neutralising, so that an exported file submits unchanged.
      const text = csvCellText(cell);
      fields[name] = NUMERIC_COLUMNS.has(name) ? toNumber(text) : text;
    }
    return fields;
  });

  // csv-parse miscounts lines around CRLF inside quoted cells, so lines are counted here from
  // the byte offset where each record ends (the next record starts after any blank lines).
  const lines: number[] = [];
  let offset = header.info.bytes;
  let line = 1 + countNewlines(content, 0, offset);
  for (const row of data) {
    let start = offset;
    while (content[start] === 0x0a || content[start] === 0x0d) start++;
    line += countNewlines(content, offset, start);
    lines.push(line);
    line += countNewlines(content, start, row.info.bytes);
    offset = row.info.bytes;
  }
  return { records, locate: (index) => `line ${lines[index] ?? "?"}` };
}

const OTHER_DELIMITERS = [
  [";", "';'"],
  ["\t", "tab"],
  ["|", "'|'"],
] as const;

/**
 * A spreadsheet saved with `;` (or tab) between fields reads as one column per row: every
 * record would come back with a problem per required field. One hint says what is wrong.
 */
function checkDelimiter(columns: string[], file: string): void {
  const [only] = columns;
  if (columns.length !== 1 || only === undefined) return;
  const used = OTHER_DELIMITERS.find(([delimiter]) => only.includes(delimiter));
  if (used === undefined) return;
  throw new RecordFileError(
    `${file}: the header row has one column, '${only}': fields must be separated by commas, and this file seems to use ${used[1]}`,
  );
}

/** Either an array of records or `{ "data": [...] }`. */
export function parseJson(text: string, file = "input"): RecordSource {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let document: unknown;
  try {
    document = JSON.parse(source);
  } catch (error) {
    if (source.trim() === "") throw new RecordFileError(`${file}: empty JSON file`);
    // "at position N" means little in a 100 MB file: its line does.
    const { message } = error as Error;
    const position = /at position (\d+)/.exec(message)?.[1];
    const line = position === undefined ? "" : ` on line ${lineIndex(source)(Number(position))}`;
    throw new RecordFileError(`${file}: invalid JSON${line}: ${message}`);
  }
  const records = Array.isArray(document)
    ? document
    : isObject(document) && Array.isArray(document.data)
      ? document.data
      : undefined;
  if (records === undefined) {
    throw new RecordFileError(`${file}: expected an array of records or an object with "data"`);
  }
  const { offsets, fields } = recordOffsets(source);
  const lineOf = lineIndex(source);
  const lines = offsets.length === records.length ? offsets.map(lineOf) : [];
  // Line numbers only help when each record starts on its own line (not in minified JSON).
  if (lines.length === 0 || new Set(lines).size !== lines.length) {
    return { records, locate: (index) => `record ${index + 1}` };
  }
  return {
    records,
    locate: (index, field) => {
      // `field` may be a path into the record (`quote.id`): its first step is the record's key.
      const offset =
        field === undefined ? undefined : fields[index]?.get(field.split(".")[0] ?? "");
      return `line ${offset === undefined ? (lines[index] ?? "?") : lineOf(offset)}`;
    },
  };
}

/** A decimal cell is a number, also one too large for a double (sent as such: batch-json.ts). */
function toNumber(cell: string): string | number {
  return DECIMAL.test(cell) ? Number(cell) : cell;
}

function countNewlines(content: Buffer, from: number, to: number): number {
  let count = 0;
  for (let i = from; i < to && i < content.length; i++) if (content[i] === 0x0a) count++;
  return count;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
