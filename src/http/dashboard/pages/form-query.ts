import type { z } from "zod";
import { ValidationError } from "../../../domain/errors.js";
import { problemsOf } from "../../../schemas/problems.js";
import { zod3Messages } from "../../../schemas/zod-messages.js";

/**
 * A GET form's query as the API's schemas expect it: a field left empty is absent (a form
 * sends `dateGte=` for an empty date), and a repeated parameter keeps its first value.
 */
export const formQuery = (query: unknown) => firstValues(query, (value) => value.trim());

/**
 * A link's query as given, each parameter's first value (an empty one absent): unlike a typed
 * form's, nothing is trimmed, since ids may begin or end with spaces.
 */
export const linkQuery = (query: unknown) => firstValues(query, (value) => value);

function firstValues(query: unknown, clean: (value: string) => string): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof query !== "object" || query === null) return out;
  for (const [name, value] of Object.entries(query)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === "string" && clean(first) !== "") out[name] = clean(first);
  }
  return out;
}

/** `?a=1&b=2` of the given values (empty ones left out), for links that keep a page's filters. */
export function queryString(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== "") search.set(name, String(value));
  }
  const text = search.toString();
  return text === "" ? "" : `?${text}`;
}

/** A form's query checked by one of the API's schemas; a bad one is a 400 page. */
export function parseFormQuery<T extends z.ZodType>(
  schema: T,
  query: unknown,
  read: (query: unknown) => Record<string, string> = formQuery,
): z.infer<T> {
  const parsed = schema.safeParse(read(query), zod3Messages);
  if (!parsed.success) throw new ValidationError(problemsOf(parsed.error));
  return parsed.data;
}
