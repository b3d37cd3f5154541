import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { marketMakerCaller } from "../src/domain/caller.js";
import { createServices } from "../src/services/index.js";
import { openDatabase } from "../src/store/database.js";
import { createStores } from "../src/store/stores.js";
import { type CliDatabase, cliDatabase, runCli } from "./helpers/cli.js";
import { baseFixture } from "./helpers/fixture.js";
import { depthSnapshot, withDepth200 } from "./helpers/public-depth.js";

/**
 * `trading-reports quality recompute`: after PUBLIC_DEPTH_TOLERANCE changes, the stored
 * reports' `exceeds_public_depth` follows the new tolerance. acme's report reaches 6,000 of
 * depth where the public book shows 5,000: above it by 20 %.
 */
let cliDb: CliDatabase;
beforeAll(async () => {
  cliDb = await cliDatabase("tr-quality-cli-");
  const fixture = {
    ...baseFixture(),
    depthSnapshots: [depthSnapshot("2025-03-01", { costToMoveDownUsd: 5000 })],
  };
  expect((await cliDb.seed(fixture as never)).code).toBe(0);
  const database = await openDatabase(cliDb.config);
  try {
    const services = createServices(createStores(database.db), { referenceDataCheckMs: 0 });
    await services.submitReports(marketMakerCaller("acme"), {
      version: 2,
      body: { data: [withDepth200("2025-03-01", 6000)] },
      dryRun: false,
    });
  } finally {
    await database.close();
  }
});
afterAll(() => cliDb?.close());

const recompute = (tolerance: string, ...flags: string[]) =>
  runCli({ ...cliDb.env, PUBLIC_DEPTH_TOLERANCE: tolerance }, ["quality", "recompute", ...flags]);

async function flags(): Promise<number> {
  const database = await openDatabase(cliDb.config);
  try {
    const row = await database.db
      .selectFrom("reports")
      .select("quality_flags")
      .where("organization_id", "=", "acme")
      .executeTakeFirstOrThrow();
    return row.quality_flags;
  } finally {
    await database.close();
  }
}

describe("trading-reports quality recompute", () => {
  it("re-evaluates exceeds_public_depth against the tolerance it runs with", async () => {
    expect(await flags()).toBe(8); // stored with the default tolerance, 0.1
    const wider = await recompute("0.25", "--json");
    expect(wider.code).toBe(0);
    expect(JSON.parse(wider.out)).toMatchObject({ changed: 1 });
    expect(await flags()).toBe(0);
    expect(await recompute("0.25")).toMatchObject({
      code: 0,
      out: "0 reports changed exceeds_public_depth\n",
    });
    expect((await recompute("0.1")).out).toBe("1 reports changed exceeds_public_depth\n");
    expect(await flags()).toBe(8);
  });
});
