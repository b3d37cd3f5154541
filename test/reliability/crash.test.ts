import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { METRICS } from "../../src/domain/report.js";
import { baseFixture, KEYS, v2Record } from "../helpers/fixture.js";
import {
  addDays,
  call,
  databaseBackends,
  killHard,
  type Server,
  shuffle,
  sleep,
  startServer,
  stopAllServers,
  stopServer,
  within,
  writeSeed,
} from "./support.js";

/**
 * Hardening item 3: kill -9 the server repeatedly while clients submit; after each restart,
 * every batch that got a 201 is there in full (same values), and no batch is there in part.
 * Each batch has a date of its own, which is how the listing groups records back into batches.
 * CRASH_ROUNDS sets the number of kills (default 5; e.g. CRASH_ROUNDS=50 for a longer run).
 */

const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 5);
const CLIENTS = 4;
const FIRST_DATE = "2001-01-01";

/** Keys one date can hold, all listed for Acme (its engaged coins) and none routed elsewhere. */
const SLOTS = (() => {
  const slots: { exchangeId: string; baseCoinId: string; quoteCoinId: string; spot: boolean }[] =
    [];
  const quotes = ["tether", "usd-coin", "bitcoin", "aave", "chainlink", "uniswap"];
  for (const baseCoinId of ["chainlink", "uniswap"]) {
    for (const quoteCoinId of quotes.filter((q) => q !== baseCoinId)) {
      for (const exchangeId of ["binance", "kraken", "nodata"])
        slots.push({ exchangeId, baseCoinId, quoteCoinId, spot: true });
      for (const exchangeId of ["binance_futures", "deribit"])
        slots.push({ exchangeId, baseCoinId, quoteCoinId, spot: false });
    }
  }
  return slots; // 50
})();

type Batch = { date: string; records: Record<string, unknown>[] };

const keyOf = (r: Record<string, unknown>) =>
  `${r.exchangeId}|${r.baseCoinId}|${r.quoteCoinId ?? ""}`;

function makeBatch(n: number): Batch {
  const date = addDays(FIRST_DATE, n);
  const size = 10 + Math.floor(Math.random() * (SLOTS.length - 9));
  const records = shuffle([...SLOTS])
    .slice(0, size)
    .map((slot, i) =>
      v2Record({
        date,
        exchangeId: slot.exchangeId,
        baseCoinId: slot.baseCoinId,
        quoteCoinId: slot.quoteCoinId,
        instrumentType: slot.spot ? "spot" : "perp",
        bidDepth50: n * 1000 + i,
        askDepth50: n + i / 64,
        orderFillVolumeMaker: n,
      }),
    );
  return { date, records };
}

type Ledger = {
  sent: Map<string, Batch>;
  acknowledged: Set<string>;
  figures: {
    rounds: number;
    batchesSent: number;
    acknowledged: number;
    unanswered: number;
    otherStatuses: number;
    verifications: number;
    recordsChecked: number;
    losses: number;
    partialBatches: number;
    unknownRecords: number;
    wrongValues: number;
    inDoubtPresent: number;
    inDoubtAbsent: number;
  };
};

/** Every listed record, all pages (a bounded walk). */
async function listEverything(base: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for (let page = 1; page <= 1_000; page++) {
    const reply = await call(base, `/api/v1/reports?pageSize=500&page=${page}`, {
      key: KEYS.acme,
      timeoutMs: 30_000,
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const body = reply.body as { items: Record<string, unknown>[]; totalPages: number };
    items.push(...body.items);
    if (page >= body.totalPages) break;
  }
  return items;
}

/**
 * Checks the store against the ledger: acknowledged batches whole and equal, every other
 * batch whole or absent, nothing that was never sent. Returns the problems found.
 */
async function verify(base: string, ledger: Ledger, final: boolean): Promise<string[]> {
  const problems: string[] = [];
  const byDate = new Map<string, Record<string, unknown>[]>();
  for (const item of await listEverything(base)) {
    const date = String(item.date);
    const group = byDate.get(date) ?? [];
    group.push(item);
    byDate.set(date, group);
  }
  const f = ledger.figures;
  f.verifications++;
  for (const [date, items] of byDate) {
    const batch = ledger.sent.get(date);
    if (batch === undefined) {
      f.unknownRecords += items.length;
      problems.push(`${items.length} records of ${date}, a batch never sent`);
      continue;
    }
    if (items.length !== batch.records.length) {
      f.partialBatches++;
      problems.push(`batch ${date}: ${items.length} of ${batch.records.length} records present`);
    }
    const submitted = new Map(batch.records.map((r) => [keyOf(r), r]));
    for (const item of items) {
      f.recordsChecked++;
      const record = submitted.get(keyOf(item));
      if (record === undefined) {
        f.unknownRecords++;
        problems.push(`batch ${date}: record ${keyOf(item)} was not in it`);
        continue;
      }
      const wrong = [...METRICS, "type"].filter((m) => item[m] !== record[m]);
      if (wrong.length > 0) {
        f.wrongValues++;
        problems.push(`batch ${date} ${keyOf(item)}: ${wrong.join(", ")} differ`);
      }
    }
  }
  for (const date of ledger.acknowledged) {
    if (!byDate.has(date)) {
      f.losses++;
      problems.push(`acknowledged batch ${date} is missing`);
    }
  }
  if (final) {
    for (const date of ledger.sent.keys()) {
      if (ledger.acknowledged.has(date)) continue;
      if (byDate.has(date)) f.inDoubtPresent++;
      else f.inDoubtAbsent++;
    }
  }
  return problems;
}

/** Clients submit new batches back to back until `stopped()`; returns when all have ended. */
async function submitUntilKilled(
  server: Server,
  ledger: Ledger,
  stopped: () => boolean,
  onAcknowledged: () => void,
) {
  const client = async () => {
    while (!stopped()) {
      const batch = makeBatch(ledger.sent.size);
      ledger.sent.set(batch.date, batch);
      ledger.figures.batchesSent++;
      try {
        const reply = await call(server.base, "/api/v2/report", {
          key: KEYS.acme,
          body: { data: batch.records },
          timeoutMs: 20_000,
        });
        if (reply.status === 201) {
          ledger.acknowledged.add(batch.date);
          ledger.figures.acknowledged++;
          onAcknowledged();
        } else {
          ledger.figures.otherStatuses++;
          throw new Error(`unexpected ${reply.status}: ${JSON.stringify(reply.body)}`);
        }
      } catch (error) {
        if (!stopped() && server.alive()) throw error;
        ledger.figures.unanswered++; // in doubt: killed while it was in flight
        return;
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
}

const backends = databaseBackends("tr-crash-pglite-");

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "tr-crash-"));
});
afterAll(async () => {
  await stopAllServers();
  rmSync(dir, { recursive: true, force: true });
});

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`kill -9 while clients submit (${backend.name})`, () => {
    it(
      `${ROUNDS} rounds: every acknowledged batch survives whole, none is stored in part`,
      async () => {
        const seedFile = writeSeed(dir, baseFixture());
        const { env, tearDown } = await backend.setUp();
        const ledger: Ledger = {
          sent: new Map(),
          acknowledged: new Set(),
          figures: {
            rounds: 0,
            batchesSent: 0,
            acknowledged: 0,
            unanswered: 0,
            otherStatuses: 0,
            verifications: 0,
            recordsChecked: 0,
            losses: 0,
            partialBatches: 0,
            unknownRecords: 0,
            wrongValues: 0,
            inDoubtPresent: 0,
            inDoubtAbsent: 0,
          },
        };
        const problems: string[] = [];
        const startedAt = performance.now();
        try {
          for (let round = 1; round <= ROUNDS; round++) {
            // Each start after the first is the restart after a crash.
            const server = await startServer({ seedFile, env });
            problems.push(...(await verify(server.base, ledger, false)));
            let killed = false;
            let warm: () => void = () => {};
            const firstAcknowledged = new Promise<void>((resolve) => {
              warm = resolve;
            });
            const clients = submitUntilKilled(server, ledger, () => killed, warm);
            clients.catch(() => {}); // awaited below; a failure must not go unhandled meanwhile
            // The clock starts at the round's first 201, so that the kill always lands while
            // batches are being written (not while the first request loads reference data).
            await within(Promise.race([firstAcknowledged, clients]), 30_000, "a first 201");
            await sleep(200 + Math.random() * 600);
            killed = true;
            await killHard(server);
            await within(clients, 30_000, "clients to notice the kill");
            ledger.figures.rounds++;
          }
          const server = await startServer({ seedFile, env });
          problems.push(...(await verify(server.base, ledger, true)));
          await stopServer(server);
        } finally {
          await stopAllServers();
          await tearDown();
        }
        const f = ledger.figures;
        console.log(
          `[crash ${backend.name}] ${f.rounds} kill -9 rounds in ` +
            `${((performance.now() - startedAt) / 1000).toFixed(1)} s: ${f.batchesSent} batches ` +
            `sent, ${f.acknowledged} acknowledged (201), ${f.unanswered} unanswered when killed ` +
            `(${f.inDoubtPresent} found whole, ${f.inDoubtAbsent} absent); ${f.verifications} ` +
            `verifications checked ${f.recordsChecked} records; losses ${f.losses}, partial ` +
            `batches ${f.partialBatches}, unknown records ${f.unknownRecords}, wrong values ` +
            `${f.wrongValues}, other statuses ${f.otherStatuses}`,
        );
        expect(problems).toEqual([]);
        expect(f.rounds).toBe(ROUNDS);
        expect(f.acknowledged).toBeGreaterThan(0);
      },
      60_000 + ROUNDS * 60_000,
    );
  });
}
