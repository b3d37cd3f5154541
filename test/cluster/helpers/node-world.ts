import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Fixture } from "../../../src/schemas/fixture.js";
import { runCli } from "../../helpers/cli.js";
import { baseFixture, KEYS, v2Record } from "../../helpers/fixture.js";

/** Keys of an organization of its own ("reader"): a per-key budget apart from the others'. */
export const READER_KEYS = [
  "reader-one-key-0123456789abcdef0123456789",
  "reader-two-key-0123456789abcdef0123456789",
] as const;

export { KEYS };

/** Exchanges `ex-00` … with a Chainlink/USDT spot market each: room for many distinct keys. */
export const EXCHANGES = 40;
// 40 × 2,500 = 100,000 keys: a quiet machine's rolling restart acknowledged some 1,800
// batches of 20 and ran the 900 days that were here out. The last day is still in the past.
const FIRST_DAY = Date.UTC(2019, 0, 1);
export const DAYS = 2_500;

export const exchangeId = (i: number) => `ex-${String(i).padStart(2, "0")}`;

/** The suite's base fixture plus EXCHANGES exchanges, each with a Chainlink/USDT spot market. */
export function nodeFixture(): Fixture {
  const base = baseFixture();
  const ids = Array.from({ length: EXCHANGES }, (_, i) => exchangeId(i));
  return {
    ...base,
    exchanges: [
      ...base.exchanges,
      ...ids.map((id) => ({
        id,
        name: `Exchange ${id}`,
        spot: true,
        derivatives: false,
        marketData: true,
      })),
    ],
    organizations: [
      ...base.organizations,
      { id: "reader", name: "Reader", apiKeys: [...READER_KEYS], engagements: [] },
    ],
    markets: [
      ...base.markets,
      ...ids.map((exchangeId) => ({
        exchangeId,
        baseCoinId: "chainlink",
        quoteCoinId: "tether",
        quoteSymbol: "USDT",
        instrumentType: "spot" as const,
        collectedSince: "2024-01-01",
      })),
    ],
  };
}

/** Migrates and seeds the database at `url` in this process (the `seed` command). */
export async function seedNodes(url: string, fixture: Fixture = nodeFixture()): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "tr-nodes-"));
  try {
    const file = join(dir, "fixture.json");
    writeFileSync(file, JSON.stringify(fixture));
    const result = await runCli({ DATABASE_URL: url, LOG_LEVEL: "silent" }, ["seed", file]);
    if (result.code !== 0) throw new Error(`seed failed: ${result.err}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export type RecordKey = { exchangeId: string; date: string };
export const keyText = (k: RecordKey) => `${k.exchangeId} ${k.date}`;

/**
 * Batches of `size` v2 records whose keys no other client's batches share: client `client`
 * of `clients` owns the exchanges i with i % clients === client, each day of DAYS on each.
 */
export function* distinctBatches(client: number, clients: number, size: number) {
  let batch: Record<string, unknown>[] = [];
  for (let e = client; e < EXCHANGES; e += clients) {
    for (let day = 0; day < DAYS; day++) {
      const date = new Date(FIRST_DAY + day * 86_400_000).toISOString().slice(0, 10);
      batch.push(v2Record({ exchangeId: exchangeId(e), date, bidDepth50: 4000 + day }));
      if (batch.length === size) {
        yield batch;
        batch = [];
      }
    }
  }
}
