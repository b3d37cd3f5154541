import type { z } from "zod";
import type { Problem } from "../domain/errors.js";

/** Zod issues as the problems of a 400 body: dotted path (omitted at the root) and message. */
export function problemsOf(error: z.ZodError, prefix: string[] = []): Problem[] {
  return error.issues.map((issue) => {
    const path = [...prefix, ...issue.path.map(String)].join(".");
    return path === "" ? { message: issue.message } : { path, message: issue.message };
  });
}
