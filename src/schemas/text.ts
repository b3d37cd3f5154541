import { z } from "zod";

/** Any unpaired UTF-16 surrogate (in `u` mode a valid pair is one code point, not a match). */
const LONE_SURROGATE = /\p{Cs}/u;

/** Why a text cannot be stored (a NUL, a lone surrogate). */
export const NOT_STORABLE_MESSAGES: readonly string[] = [
  "String must not contain NUL characters",
  "String must be well-formed Unicode (no lone surrogates)",
];

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
    .refine((value) => !value.includes("\u0000"), NOT_STORABLE_MESSAGES[0])
    .refine((value) => !LONE_SURROGATE.test(value), NOT_STORABLE_MESSAGES[1]);

/** Length limits of the identifiers and names the service stores (fixtures and submissions). */
export const MAX_ID_LENGTH = 200;
export const MAX_SYMBOL_LENGTH = 50;
export const MAX_NAME_LENGTH = 200;

/**
 * A string of an answer that the service checked on its way in with a limit of `max`: the
 * limit is documented (`maxLength`), not checked again on the way out.
 */
export const storedText = (max: number) => z.string().meta({ maxLength: max });

/** A whole number of an answer (a count, a page number), documented as a 64-bit integer. */
export const wholeNumber = () => z.number().int().meta({ format: "int64" });

/**
 * An id in a path: any text. One that is not the caller's, whatever its form or length, is a
 * 404 (the length documented is that of every id the service gives).
 */
export const pathId = (description: string) => z.string().meta({ maxLength: 100, description });
