import fc from "fast-check";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { float8ArrayBinary, textArrayLiteral } from "../src/store/pg-arrays.js";
import { freshDatabase, type TestDatabase } from "./helpers/database.js";

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(async () => database?.close());

const RUNS = Number(process.env.FUZZ_RUNS ?? 200);

async function readBack(literal: string | Buffer, type: "text" | "float8"): Promise<unknown[]> {
  const result = await sql<{ a: unknown[] }>`select ${literal}::${sql.raw(type)}[] as a`.execute(
    database.db,
  );
  return result.rows[0]?.a ?? [];
}

describe("array literals sent to the database", () => {
  it("carry any storable text exactly, including quotes, backslashes, braces and 'NULL'", async () => {
    const storable = fc.oneof(
      fc.string({ unit: "binary", maxLength: 20 }),
      fc.constantFrom("NULL", "null", "", " ", "{}", '"', "\\", ",", "a,b", "{a}", "\\N"),
    );
    const text = storable.filter((s) => !s.includes("\u0000") && !/\p{Cs}/u.test(s));
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.option(text, { nil: null }), { maxLength: 12 }),
        async (values) => {
          expect(await readBack(textArrayLiteral(values), "text")).toEqual(values);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("carry every finite double bit for bit, and nulls", async () => {
    const double = fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => x + 0);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.option(double, { nil: null }), { maxLength: 12 }),
        async (values) => {
          expect(await readBack(float8ArrayBinary(values), "float8")).toEqual(values);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("keep the extremes", async () => {
    const extremes = [Number.MIN_VALUE, Number.MAX_VALUE, 1e21, 1e-7, 0.1 + 0.2, 2 ** 53 + 2];
    expect(await readBack(float8ArrayBinary(extremes), "float8")).toEqual(extremes);
  });
});
