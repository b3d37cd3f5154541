/**
 * A batch of 300 records is a body of about 190 KB. Decoded whole, its text is one string over
 * V8's largest regular object (128 KiB), which V8 maps afresh for every request and unmaps at
 * the next scavenge: on a virtual machine the page faults cost about 0.9 ms a body, more than
 * parsing it, and a seventh of the server's CPU on the ingest path (issue 19). Decoded in
 * pieces under that size, the same bytes take 30 µs.
 */
export const LARGE_BODY_BYTES = 120 * 1024;
// Text above U+00FF takes two bytes a character in V8: 48 KiB of it, plus the record that
// ends a piece, stays a regular string.
const PIECE_BYTES = 48 * 1024;

const DATA_ARRAY_PREFIX = Buffer.from('{"data":[');
const OBJECT_END_THEN_COMMA = Buffer.from("},");
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

/** Parses a piece of JSON text: an array, or undefined when the text is not valid JSON. */
export type PieceParser = (text: string) => unknown;

/**
 * The body `bytes` (valid UTF-8) parsed as `{ data: [...] }` a piece at a time, or undefined
 * when it is not of that form (as every client of ours sends a batch: `{"data":[` first and
 * `]}` last) or a piece does not parse. The caller then parses the whole body, so this never
 * changes an answer, a value or an error: it only decides whether the pieces can stand in.
 *
 * The array's text is cut after a `}` followed by a comma about every `pieceBytes`, and each
 * piece is closed with brackets: `[` T1 `]`, `[` T2 `]`, … Why the cuts cannot change the value:
 * if every piece parses as a nonempty array, each Ti is a comma-separated list of values, so the
 * whole text `[` T1 `,` T2 `,` … `]` is the array of all of them, in order (JSON has one
 * reading). A cut inside a string or a nested value leaves its piece unparseable instead.
 */
export function parseDataArrayInPieces(
  bytes: Buffer,
  parsePiece: PieceParser,
  pieceBytes = PIECE_BYTES,
): { data: unknown[] } | undefined {
  const close = closingBracketOfData(bytes);
  if (close === undefined) return undefined;
  const pieces: unknown[][] = [];
  let start = DATA_ARRAY_PREFIX.length;
  while (start <= close) {
    // Nothing after `close` but `}` and whitespace: a `},` found is within the array.
    const found =
      start + pieceBytes < close ? bytes.indexOf(OBJECT_END_THEN_COMMA, start + pieceBytes) : -1;
    const end = found === -1 ? close : found + 1;
    const elements = parsePiece(`[${bytes.toString("utf8", start, end)}]`);
    if (!Array.isArray(elements) || elements.length === 0) return undefined;
    pieces.push(elements);
    start = end + 1;
  }
  // One copy of the elements, not a push each: a body of tiny elements has hundreds of thousands.
  return { data: ([] as unknown[]).concat(...pieces) };
}

/** Where the `]` of `{"data":[…]}` is, or undefined when the body does not have that form. */
function closingBracketOfData(bytes: Buffer): number | undefined {
  if (bytes.length <= DATA_ARRAY_PREFIX.length) return undefined;
  if (bytes.compare(DATA_ARRAY_PREFIX, 0, DATA_ARRAY_PREFIX.length, 0, DATA_ARRAY_PREFIX.length))
    return undefined;
  let last = bytes.length - 1;
  while (last >= 0 && isJsonWhitespace(bytes[last] as number)) last--;
  if (bytes[last] !== CLOSE_BRACE || bytes[last - 1] !== CLOSE_BRACKET) return undefined;
  const close = last - 1;
  return close > DATA_ARRAY_PREFIX.length ? close : undefined;
}

function isJsonWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}
