import type { z } from "zod";

/**
 * The specification quotes Zod 3's message texts ("Required", "Expected number, received
 * string", "Number must be less than or equal to 100", ...). Zod 4 words them differently, so
 * this error map reproduces Zod 3's wording. It is passed to each parse of outside input
 * (`schema.safeParse(input, zod3Messages)`), never installed for the whole process: importing
 * a schema changes nothing else, and a parse that wants Zod's own texts still gets them.
 */
export const REQUIRED = "Required";
export const NOT_FINITE = "Number must be finite";

function zod3Message(issue: z.core.$ZodRawIssue): string | undefined {
  // A missing field is "Required" whatever its schema (Zod 4 reports a missing enum as a bad
  // value rather than a bad type).
  if (
    issue.input === undefined &&
    (issue.code === "invalid_type" || issue.code === "invalid_value")
  )
    return REQUIRED;
  switch (issue.code) {
    case "invalid_type":
      // Zod 4's `.int()` on a fraction; Zod 3 called it a float.
      if (issue.expected === "int" && typeof issue.input === "number")
        return "Expected integer, received float";
      if (issue.expected === "number" && typeof issue.input === "number") {
        return Number.isNaN(issue.input) ? "Expected number, received nan" : NOT_FINITE;
      }
      return `Expected ${issue.expected}, received ${receivedType(issue.input)}`;
    case "invalid_value":
      if (issue.values.length > 1 || typeof issue.values[0] === "string") {
        const expected = issue.values.map((v) => `'${String(v)}'`).join(" | ");
        return typeof issue.input === "string"
          ? `Invalid enum value. Expected ${expected}, received '${issue.input}'`
          : `Expected ${expected}, received ${receivedType(issue.input)}`;
      }
      return undefined;
    case "too_small":
      return sizeMessage(issue.origin, "at least", "greater than", issue.minimum, issue.inclusive);
    case "too_big":
      return sizeMessage(issue.origin, "at most", "less than", issue.maximum, issue.inclusive);
    default:
      return undefined;
  }
}

function sizeMessage(
  origin: string,
  countWord: string,
  compareWord: string,
  limit: number | bigint,
  inclusive: boolean | undefined,
): string | undefined {
  switch (origin) {
    case "array":
      return `Array must contain ${countWord} ${limit} element(s)`;
    case "string":
      return `String must contain ${countWord} ${limit} character(s)`;
    case "number":
    case "int":
      return `Number must be ${compareWord} ${inclusive ? "or equal to " : ""}${limit}`;
    default:
      return undefined;
  }
}

function receivedType(input: unknown): string {
  if (input === null) return "null";
  if (Array.isArray(input)) return "array";
  if (typeof input === "number" && Number.isNaN(input)) return "nan";
  if (input instanceof Date) return "date";
  return typeof input;
}

/** Parse parameters that word every message as the specification quotes them. */
export const zod3Messages = {
  error: zod3Message,
} as const satisfies z.core.ParseContext<z.core.$ZodIssue>;
