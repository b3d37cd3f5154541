/**
 * Vitest global setup: says which database this run uses, so that a log shows both halves of
 * `npm test` (an exported TEST_DATABASE_URL once made the PGlite half run on PostgreSQL).
 */
export function setup(): void {
  const url = process.env.TEST_DATABASE_URL;
  console.log(
    url === undefined
      ? "test database: PGlite, in memory"
      : `test database: PostgreSQL at ${url.replace(/:[^:@/]*@/, ":***@")}`,
  );
}
