import type { z } from "zod";
import { type Problem, ValidationError } from "../domain/errors.js";
import type { ProblemCode } from "../domain/problem-codes.js";
import { INVALID_DATE } from "./report.js";
import { NOT_STORABLE_MESSAGES } from "./text.js";
import { NOT_FINITE, REQUIRED, zod3Messages } from "./zod-messages.js";

/** Zod issues as the problems of a 400 body: dotted path (omitted at the root) and message. */
export function problemsOf(error: z.ZodError, prefix: string[] = []): Problem[] {
  return error.issues.map((issue) => {
    const path = [...prefix, ...issue.path.map(String)].join(".");
    return path === "" ? { message: issue.message } : { path, message: issue.message };
  });
}

/** `input` as `schema` reads it, or a ValidationError with its problems (a 400, an exit 2). */
export function parseOrRefuse<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input, zod3Messages);
  if (!parsed.success) throw new ValidationError(problemsOf(parsed.error));
  return parsed.data;
}

/** The same, each with its catalogue code: the problems of a submission, as logged. */
export function codedProblemsOf(error: z.ZodError): Problem[] {
  return problemsOf(error).map((problem, i) => {
    const issue = error.issues[i];
    return issue === undefined ? problem : { ...problem, code: problemCodeOf(issue) };
  });
}

/**
 * The catalogue code of a Zod issue (see domain/problem-codes.ts). A finished issue no longer
 * holds its input, so the cases the error map told apart by input (schemas/zod-messages.ts: a
 * missing value is "Required" whatever its schema) are told apart by the message it chose.
 */
export function problemCodeOf(issue: z.core.$ZodIssue): ProblemCode {
  if (issue.message === REQUIRED) return "required";
  switch (issue.code) {
    case "invalid_type":
      return issue.message === NOT_FINITE ? "not_finite" : "wrong_type";
    case "invalid_value":
      return "invalid_enum";
    case "too_small":
      return sizeCode(issue.origin, "batch_too_small", "below_minimum", "text_too_short");
    case "too_big":
      return sizeCode(issue.origin, "batch_too_large", "above_maximum", "text_too_long");
    case "custom":
      if (issue.message === INVALID_DATE) return "invalid_date";
      if (NOT_STORABLE_MESSAGES.includes(issue.message)) return "text_not_storable";
      return "invalid_value";
    default:
      return "invalid_value";
  }
}

function sizeCode(
  origin: string,
  array: ProblemCode,
  number: ProblemCode,
  text: ProblemCode,
): ProblemCode {
  if (origin === "array") return array;
  if (origin === "string") return text;
  return origin === "number" || origin === "int" || origin === "bigint" ? number : "invalid_value";
}
