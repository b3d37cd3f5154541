/** Where records and their fields are in a JSON text: for messages that name file lines. */

type Frame = {
  kind: "array" | "object";
  holdsRecords: boolean;
  key?: string;
  expectingKey: boolean;
  /** For a record's own object: its index, so that its keys' offsets are kept. */
  record?: number;
};

/**
 * Offsets where each element of the records array starts (the root array, or the array under
 * the root's "data" key; a repeated "data" key wins last, like JSON.parse), and where each
 * record's keys are (a repeated key: the last, again like JSON.parse). The text is valid JSON
 * already, so a scan of strings and brackets is enough.
 */
export function recordOffsets(text: string): { offsets: number[]; fields: Map<string, number>[] } {
  let offsets: number[] = [];
  let fields: Map<string, number>[] = [];
  const stack: Frame[] = [];
  let atElementStart = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === " " || ch === "\n" || ch === "\r" || ch === "\t") continue;
    const top = stack.at(-1);
    if (top?.holdsRecords && atElementStart && ch !== "]") offsets.push(i);
    atElementStart = false;
    if (ch === '"') {
      const end = stringEnd(text, i);
      if (top?.kind === "object" && top.expectingKey) {
        top.key = JSON.parse(text.slice(i, end + 1)) as string;
        top.expectingKey = false;
        if (top.record !== undefined) fields[top.record]?.set(top.key, i);
      }
      i = end;
    } else if (ch === ",") {
      if (top?.kind === "object") top.expectingKey = true;
      else atElementStart = top?.holdsRecords === true;
    } else if (ch === "{") {
      const record = top?.holdsRecords ? offsets.length - 1 : undefined;
      if (record !== undefined) fields[record] = new Map();
      stack.push({ kind: "object", holdsRecords: false, expectingKey: true, record });
    } else if (ch === "[") {
      const holdsRecords =
        top === undefined || (stack.length === 1 && top.kind === "object" && top.key === "data");
      if (holdsRecords) {
        offsets = [];
        fields = [];
      }
      stack.push({ kind: "array", holdsRecords, expectingKey: false });
      atElementStart = holdsRecords;
    } else if (ch === "}" || ch === "]") {
      stack.pop();
    }
  }
  return { offsets, fields };
}

function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i;
  }
  return text.length;
}

/** Offset -> one-based line number, by binary search over the line starts. */
export function lineIndex(text: string): (offset: number) => number {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return (offset) => {
    let [low, high] = [0, starts.length - 1];
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((starts[middle] ?? 0) <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  };
}
