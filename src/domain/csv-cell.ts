/**
 * One CSV cell (RFC 4180). Text that a spreadsheet would read as a formula, that is text
 * beginning with `=`, `+`, `-`, `@`, a tab or a carriage return, gets a leading single quote
 * (OWASP, "CSV Injection"): `=HYPERLINK(…)` is written `'=HYPERLINK(…)`. So does text that
 * already looks neutralised (quotes, then one of those characters: `'=X` is written `''=X`),
 * so that every text reads back as itself (csvCellText): the rule is one to one. Only text is
 * changed: numbers are written as numbers (a negative one, which the metrics never hold,
 * would stay `-5`, a number to any spreadsheet and no formula), so numeric columns read back
 * unchanged. Text with whitespace at either end is quoted, so that a reader which trims cells
 * (the submit CLI) keeps it: a quote symbol's spaces are part of its record key.
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  let text = String(value);
  if (typeof value === "string" && FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

/** Formula text, or text that would read as neutralised formula text: quotes first. */
const FORMULA_START = /^'*[=+\-@\t\r]/;

/**
 * The inverse of the rule above, for reading such a CSV back (the submit CLI): one leading `'`
 * is dropped from a cell of quotes followed by a character the rule neutralises, so
 * `'=HYPERLINK(…)` reads as `=HYPERLINK(…)` and `''=X` as `'=X`. Any other cell, including
 * one starting with `'` then something else, is left as it is.
 */
export function csvCellText(cell: string): string {
  return NEUTRALISED.test(cell) ? cell.slice(1) : cell;
}

const NEUTRALISED = /^'+[=+\-@\t\r]/;
