import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ValidationError } from "../src/domain/errors.js";
import { loadFixture } from "../src/services/fixtures.js";
import { accountabilityFixture } from "./helpers/accountability.js";
import { startTestApp, type TestApp } from "./helpers/app.js";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ fixture: accountabilityFixture() });
});
afterAll(async () => t?.close());

const load = (input: unknown) => loadFixture(t.database.stores, input, new Date());

/** The ValidationError's problems a fixture is refused with. */
async function refusal(input: unknown) {
  const error = await load(input).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ValidationError);
  return (error as ValidationError).problems;
}

const profile = async (id: string) => {
  const org = await t.database.stores.organizations.organization(id);
  return { kind: org?.kind, coins: org?.coins };
};

describe("organization kinds in a fixture", () => {
  it("stores the kind (market maker when absent) and a project's coins", async () => {
    expect(await profile("acme")).toEqual({ kind: "market_maker", coins: [] });
    expect(await profile("chainlink-labs")).toEqual({ kind: "project", coins: ["chainlink"] });
    expect(await profile("platform")).toEqual({ kind: "operator", coins: [] });
  });

  it("changes nothing when loaded again", async () => {
    expect(await load(accountabilityFixture())).toEqual({ changed: 0, eligibilityChanged: 0 });
  });

  it("updates kind and coins when loaded again with others", async () => {
    const org = { id: "newco", name: "NewCo", kind: "project", coins: ["chainlink"] };
    expect((await load({ organizations: [org] })).changed).toBe(3); // org, kind, coin
    expect((await load({ organizations: [{ ...org, coins: ["uniswap", "aave"] }] })).changed).toBe(
      3,
    ); // one coin removed, two added
    expect(await profile("newco")).toEqual({ kind: "project", coins: ["aave", "uniswap"] });
    expect(
      (await load({ organizations: [{ id: "newco", name: "NewCo", kind: "operator" }] })).changed,
    ).toBe(3);
    expect(await profile("newco")).toEqual({ kind: "operator", coins: [] });
    await load({ organizations: [{ id: "newco", name: "NewCo" }] });
    expect(await profile("newco")).toEqual({ kind: "market_maker", coins: [] });
  });

  it("refuses coins outside a project, a project without coins and unknown coins", async () => {
    const problems = await refusal({
      organizations: [
        { id: "a1", name: "A", kind: "operator", coins: ["chainlink"] },
        { id: "a2", name: "A", kind: "project" },
        { id: "a3", name: "A", kind: "project", coins: ["chainlink", "nocoin", "chainlink"] },
        { id: "a4", name: "A", coins: ["chainlink"] },
        { id: "a5", name: "A", kind: "dealer" },
      ],
    });
    expect(problems.map((p) => p.path)).toEqual([
      "organizations.4.kind",
      "organizations.0.coins",
      "organizations.1.coins",
      "organizations.2.coins.1",
      "organizations.2.coins.2",
      "organizations.3.coins",
    ]);
    expect(problems).toContainEqual({
      path: "organizations.2.coins.1",
      message: "unknown coin 'nocoin'",
    });
    expect(await t.database.stores.organizations.organization("a1")).toBeUndefined();
  });

  it("refuses engagements of a project or an operator, naming the entry", async () => {
    const engagement = { baseCoinId: "chainlink", type: "project", since: "2024-01-01" };
    const problems = await refusal({
      organizations: [
        { id: "b1", name: "B", kind: "project", coins: ["chainlink"], engagements: [engagement] },
        { id: "b2", name: "B", kind: "operator", engagements: [engagement] },
      ],
    });
    expect(problems.map((p) => p.path)).toEqual([
      "organizations.0.engagements",
      "organizations.1.engagements",
    ]);
  });

  it("refuses turning an engaged market maker into a project", async () => {
    const problems = await refusal({
      organizations: [{ id: "acme", name: "Acme Market Making", kind: "project", coins: ["aave"] }],
    });
    expect(problems).toEqual([
      { path: "organizations.0.kind", message: expect.stringContaining("stored engagements") },
    ]);
    expect(await profile("acme")).toEqual({ kind: "market_maker", coins: [] });
  });
});
