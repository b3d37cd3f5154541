import { randomUUID } from "node:crypto";

/**
 * The JSON of a batch as its file holds it. A number too large for a double (a file's 1e400,
 * or a CSV cell's 1e309) is read as Infinity, which JSON.stringify writes as null: a nullable
 * field would then take it as absent (a quoteCoinId of 1e400 beside a symbol stored the record
 * as that symbol's) and a metric would be refused as null. Written as 1e999, it reaches the
 * service as the file has it, and the service judges it as it would the file's own text.
 */
export function batchJson(body: unknown): string {
  const mark = `\u0000${randomUUID()}`;
  let marked = false;
  const text = JSON.stringify(body, (_key, value: unknown) => {
    if (typeof value !== "number" || Number.isFinite(value)) return value;
    marked = true;
    return `${mark}${value > 0 ? "+" : "-"}`;
  });
  if (!marked) return text;
  return text
    .replaceAll(JSON.stringify(`${mark}+`), "1e999")
    .replaceAll(JSON.stringify(`${mark}-`), "-1e999");
}
