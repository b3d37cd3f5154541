import { z } from "zod";

/** Any unpaired UTF-16 surrogate (in `u` mode a valid pair is one code point, not a match). */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * A string PostgreSQL stores exactly as given. Its text type cannot hold NUL, and a lone
 * surrogate has no UTF-8 form: it would be stored as U+FFFD, a silently altered value. Both
 * are refused with a 400 here instead of failing (or changing) deep in SQL.
 */
export const storableText = (max: number, min = 1) =>
  z
    .string()
    .min(min)
    .max(max)
    .refine((value) => !value.includes("\u0000"), "String must not contain NUL characters")
    .refine(
      (value) => !LONE_SURROGATE.test(value),
      "String must be well-formed Unicode (no lone surrogates)",
    );
