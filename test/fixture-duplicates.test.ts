import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ValidationError } from "../src/domain/errors.js";
import type { Fixture } from "../src/schemas/fixture.js";
import { loadFixture } from "../src/services/fixtures.js";
import { freshDatabase, type TestDatabase } from "./helpers/database.js";
import { baseFixture } from "./helpers/fixture.js";

/**
 * An engagement is named by organization, coin and `since`, an obligation period likewise:
 * loading one again updates it. One fixture naming the same engagement or period twice is
 * ambiguous, like a coin listed twice, and is refused as a whole (CONTRACT section 3), naming
 * the second entry and the first; otherwise the last would silently win, a period could be
 * stored outside its engagement and loading the file again would change rows each time.
 */

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase();
  await loadFixture(database.stores, baseFixture(), new Date());
});
afterAll(async () => database?.close());

const market = { exchangeId: "binance", quote: "tether", instrumentType: "spot" as const };
const period = (since: string, until: string | null, minBidDepth200: number) => ({
  since,
  until,
  markets: [market],
  kpis: { minBidDepth200 },
});
type Engagement = Fixture["organizations"][number]["engagements"][number];

/** A fixture of one new market maker with these engagements. */
const newcomer = (engagements: Engagement[]) => ({
  organizations: [{ id: "newcomer", name: "Newcomer", apiKeys: [], engagements }],
});

/** What a load could have changed: every engagement and obligation period. */
async function stored() {
  return {
    engagements: [
      ...(await database.stores.organizations.engagements("acme")),
      ...(await database.stores.organizations.engagements("newcomer")),
    ],
    periods: await database.stores.obligations.list({ kind: "all" }),
  };
}

async function refusal(input: unknown) {
  const before = await stored();
  const error = await loadFixture(database.stores, input, new Date()).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ValidationError);
  expect(await stored()).toEqual(before);
  return (error as ValidationError).problems;
}

describe("an engagement listed twice in one fixture", () => {
  it("is refused as a duplicate of the first, with nothing loaded", async () => {
    const problems = await refusal(
      newcomer([
        { baseCoinId: "chainlink", type: "project", since: "2024-01-01", until: null },
        { baseCoinId: "uniswap", type: "project", since: "2024-01-01", until: null },
        { baseCoinId: "chainlink", type: "prop", since: "2024-01-01", until: "2024-03-31" },
      ]),
    );
    expect(problems).toEqual([
      {
        path: "organizations.0.engagements.2",
        message: "duplicate of organizations.0.engagements.0",
      },
    ]);
  });

  it("is refused even when the first lists obligation periods the second would strand", async () => {
    const fixture = baseFixture();
    const acme = fixture.organizations[0];
    if (acme === undefined) throw new Error("baseFixture has acme");
    acme.engagements = [
      {
        baseCoinId: "chainlink",
        type: "project",
        since: "2024-01-01",
        until: null,
        obligations: [period("2025-01-01", null, 5000)],
      },
      { baseCoinId: "chainlink", type: "project", since: "2024-01-01", until: "2024-06-30" },
    ];
    const problems = await refusal(fixture);
    expect(problems).toContainEqual({
      path: "organizations.0.engagements.1",
      message: "duplicate of organizations.0.engagements.0",
    });
  });

  it("is not the same engagement for another coin, another since or another organization", async () => {
    const engagements: Engagement[] = [
      { baseCoinId: "aave", type: "prop", since: "2024-01-01", until: "2024-06-30" },
      { baseCoinId: "aave", type: "prop", since: "2024-07-01", until: null },
      { baseCoinId: "uniswap", type: "prop", since: "2024-01-01", until: null },
    ];
    const fixture = newcomer(engagements);
    fixture.organizations.push({ id: "other", name: "Other", apiKeys: [], engagements });
    await loadFixture(database.stores, fixture, new Date());
    expect((await loadFixture(database.stores, fixture, new Date())).changed).toBe(0);
  });
});

describe("an obligation period listed twice in one fixture", () => {
  const acmeWith = (...obligations: ReturnType<typeof period>[]) => {
    const fixture = baseFixture();
    const chainlink = fixture.organizations[0]?.engagements[0];
    if (chainlink === undefined) throw new Error("baseFixture has acme's chainlink engagement");
    chainlink.obligations = obligations;
    return fixture;
  };

  it("is refused as a duplicate of the first, with nothing loaded", async () => {
    const problems = await refusal(
      acmeWith(period("2025-01-01", "2025-12-31", 100_000), period("2025-01-01", "2025-01-31", 1)),
    );
    expect(problems).toEqual([
      {
        path: "organizations.0.engagements.0.obligations.1",
        message: "duplicate of organizations.0.engagements.0.obligations.0",
      },
    ]);
  });

  it("still updates a stored period when the fixture lists it once", async () => {
    await loadFixture(database.stores, acmeWith(period("2025-01-01", null, 100)), new Date());
    const again = acmeWith(period("2025-01-01", "2025-12-31", 200));
    expect((await loadFixture(database.stores, again, new Date())).changed).toBe(1);
    expect((await loadFixture(database.stores, again, new Date())).changed).toBe(0);
    const periods = await database.stores.obligations.list({ kind: "all" });
    expect(periods.map((p) => [p.since, p.until, p.kpis])).toEqual([
      ["2025-01-01", "2025-12-31", { minBidDepth200: 200 }],
    ]);
  });
});
