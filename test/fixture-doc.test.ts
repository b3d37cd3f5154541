import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { fixtureSchema } from "../src/schemas/fixture.js";
import { startTestApp, type TestApp } from "./helpers/app.js";

/** docs/fixture-format.md's example is a fixture that loads, with what the page says it holds. */
const page = readFileSync(new URL("../docs/fixture-format.md", import.meta.url), "utf8");
const example = /```json\n([\s\S]*?)```/.exec(page)?.[1] ?? "";

let t: TestApp | undefined;
afterAll(async () => t?.close());

describe("docs/fixture-format.md", () => {
  it("shows a fixture that loads: its market maker owes what its engagement says", async () => {
    const fixture = fixtureSchema.parse(JSON.parse(example));
    expect(Object.keys(fixture)).toEqual([
      "coins",
      "exchanges",
      "markets",
      "organizations",
      "depthSnapshots",
    ]);
    t = await startTestApp({ fixture });
    const key = "acme-plaintext-key-for-tests-000001";
    const obligations = await t.request({ url: "/api/v1/obligations", key });
    expect(obligations.statusCode).toBe(200);
    expect(obligations.json().items).toHaveLength(1);
    const revoked = await t.request({
      url: "/api/v1/projects",
      key: "acme-old-key-for-tests-0000000002",
    });
    expect(revoked.statusCode).toBe(401);
  });
});
