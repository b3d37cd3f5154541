import type { ProblemCode } from "./problem-codes.js";

/**
 * One problem of a bad request: where (`data.3.bidDepth50`), what, and the rule it breaks
 * (kept in the submission log; the specified 400 body shows path and message only).
 */
export type Problem = { path?: string; message: string; code?: ProblemCode };

/**
 * A 400 lists at most `max` problems, then one entry saying how many more there were, so that
 * a small body cannot buy a large answer (300 empty records have some 4,500 problems).
 */
export function capProblems(problems: Problem[], max: number): Problem[] {
  if (problems.length <= max) return problems;
  return [...problems.slice(0, max), { message: `… and ${problems.length - max} more problems` }];
}

/** How many problems `capProblems`' last entry says were left out; undefined for any other. */
export function unlistedProblems(problem: Pick<Problem, "path" | "message">): number | undefined {
  const unlisted =
    problem.path === undefined ? /^… and (\d+) more problems$/.exec(problem.message) : null;
  return unlisted === null ? undefined : Number(unlisted[1]);
}

/**
 * Every failure the service reports on purpose. Only `http/errors.ts` knows which HTTP status
 * and body each kind becomes.
 */
export abstract class DomainError extends Error {
  abstract readonly kind:
    | "invalid"
    | "unauthenticated"
    | "forbidden"
    | "not_found"
    | "conflict"
    | "unprocessable"
    | "unavailable";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The input breaks the rules; `problems` lists every one of them, in input order. */
export class ValidationError extends DomainError {
  readonly kind = "invalid";
  constructor(readonly problems: Problem[]) {
    super(problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join("; "));
  }
}

export class AuthenticationError extends DomainError {
  readonly kind = "unauthenticated";
}

/** The caller is known, but its kind may not do this (a project key submitting). */
export class ForbiddenError extends DomainError {
  readonly kind = "forbidden";
}

export class NotFoundError extends DomainError {
  readonly kind = "not_found";
}

export class ConflictError extends DomainError {
  readonly kind = "conflict";
}

/** Well-formed, but at odds with what the service already holds (an Idempotency-Key reused). */
export class UnprocessableError extends DomainError {
  readonly kind = "unprocessable";
}

/** A dependency (the database) cannot be reached now; the caller should retry later. */
export class UnavailableError extends DomainError {
  readonly kind = "unavailable";
}
