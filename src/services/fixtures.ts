import type { Kysely } from "kysely";
import { apiKeyPrefix, hashApiKey } from "../domain/api-key.js";
import { type Problem, ValidationError } from "../domain/errors.js";
import { ReferenceData, type ReferenceSnapshot } from "../domain/reference-data.js";
import { type Fixture, fixtureSchema } from "../schemas/fixture.js";
import { problemsOf } from "../schemas/problems.js";
import { zod3Messages } from "../schemas/zod-messages.js";
import { createEligibilityStore } from "../store/eligibility-store.js";
import { createOrganizationStore } from "../store/organization-store.js";
import { createReferenceStore } from "../store/reference-store.js";
import { withTransientRetry } from "../store/retry.js";
import type { Tables } from "../store/tables.js";
import { recomputeEligibility } from "./eligibility.js";

export type LoadSummary = { changed: number; eligibilityChanged: number };

/** Parses and checks a fixture as a whole; throws a ValidationError naming each bad entry. */
export function parseFixture(input: unknown, known: ReferenceSnapshot): Fixture {
  const parsed = fixtureSchema.safeParse(input, zod3Messages);
  if (!parsed.success) {
    throw new ValidationError(problemsOf(parsed.error));
  }
  const fixture = parsed.data;
  const problems: Problem[] = [];
  const coins = new Set([...known.coins.map((c) => c.id), ...fixture.coins.map((c) => c.id)]);
  const exchanges = new Set([
    ...known.exchanges.map((e) => e.id),
    ...fixture.exchanges.map((e) => e.id),
  ]);
  const unique = (section: string, keyOf: (entry: never) => string, entries: unknown[]) => {
    const seen = new Map<string, number>();
    entries.forEach((entry, i) => {
      const key = keyOf(entry as never);
      const first = seen.get(key);
      if (first !== undefined)
        problems.push({ path: `${section}.${i}`, message: `duplicate of ${section}.${first}` });
      else seen.set(key, i);
    });
  };
  unique("coins", (c: Fixture["coins"][number]) => c.id, fixture.coins);
  unique("exchanges", (e: Fixture["exchanges"][number]) => e.id, fixture.exchanges);
  unique(
    "markets",
    (m: Fixture["markets"][number]) =>
      [m.exchangeId, m.baseCoinId, m.instrumentType, m.quoteSymbol.toUpperCase()].join(" "),
    fixture.markets,
  );
  unique("organizations", (o: Fixture["organizations"][number]) => o.id, fixture.organizations);
  // One key, one owner: a key listed twice (in one organization or two) is ambiguous.
  const keys = new Map<string, string>();
  fixture.organizations.forEach((o, i) => {
    o.apiKeys.forEach((entry, j) => {
      const key = typeof entry === "string" ? entry : entry.key;
      const path = `organizations.${i}.apiKeys.${j}`;
      const first = keys.get(key);
      if (first !== undefined) problems.push({ path, message: `duplicate of ${first}` });
      else keys.set(key, path);
    });
  });
  fixture.markets.forEach((m, i) => {
    if (!exchanges.has(m.exchangeId))
      problems.push({
        path: `markets.${i}.exchangeId`,
        message: `unknown exchange '${m.exchangeId}'`,
      });
    if (!coins.has(m.baseCoinId))
      problems.push({ path: `markets.${i}.baseCoinId`, message: `unknown coin '${m.baseCoinId}'` });
    if (m.quoteCoinId != null && !coins.has(m.quoteCoinId)) {
      problems.push({
        path: `markets.${i}.quoteCoinId`,
        message: `unknown coin '${m.quoteCoinId}'`,
      });
    }
  });
  fixture.organizations.forEach((o, i) => {
    o.engagements.forEach((e, j) => {
      if (!coins.has(e.baseCoinId)) {
        problems.push({
          path: `organizations.${i}.engagements.${j}.baseCoinId`,
          message: `unknown coin '${e.baseCoinId}'`,
        });
      }
    });
  });
  if (problems.length > 0) throw new ValidationError(problems);
  return fixture;
}

export function referenceSnapshotOf(
  fixture: Pick<Fixture, "coins" | "exchanges" | "markets">,
): ReferenceSnapshot {
  return {
    coins: fixture.coins,
    exchanges: fixture.exchanges.map((e) => ({ ...e, group: e.group ?? e.id })),
    markets: fixture.markets.map((m) => ({
      ...m,
      quoteCoinId: m.quoteCoinId ?? null,
      quoteSymbol: m.quoteSymbol.toUpperCase(),
    })),
  };
}

/**
 * Loads a fixture in one transaction: all of it or, on any problem, nothing. Loading the same
 * file twice changes nothing. Eligibility is recomputed when reference data changed.
 */
export async function loadFixture(
  db: Kysely<Tables>,
  input: unknown,
  now: Date,
): Promise<LoadSummary> {
  // A serialization failure or a deadlock (with another writer of the same organization or
  // reference rows) aborts one side: here, the whole load is run again.
  return withTransientRetry(() => loadInTransaction(db, input, now));
}

async function loadInTransaction(
  db: Kysely<Tables>,
  input: unknown,
  now: Date,
): Promise<LoadSummary> {
  return db.transaction().execute(async (trx) => {
    const references = createReferenceStore(trx);
    const fixture = parseFixture(input, (await references.snapshot()).snapshot);
    const referenceChanged = await references.upsert(trx, referenceSnapshotOf(fixture));
    let changed = referenceChanged;
    const orgs = createOrganizationStore(trx);
    const problems: Problem[] = [];
    for (const [i, org] of fixture.organizations.entries()) {
      if (await orgs.upsertOrganization(trx, org.id, org.name)) changed++;
      for (const [j, entry] of org.apiKeys.entries()) {
        const key = typeof entry === "string" ? { key: entry } : entry;
        const hash = hashApiKey(key.key);
        const added = await orgs.addApiKey(trx, {
          organizationId: org.id,
          hash,
          prefix: apiKeyPrefix(key.key),
          label: key.label ?? "fixture",
        });
        if (added) changed++;
        else if ((await orgs.findApiKeyByHash(hash))?.organizationId !== org.id) {
          // Skipping it silently would leave the fixture's author believing the key is theirs.
          problems.push({
            path: `organizations.${i}.apiKeys.${j}`,
            message: "key already belongs to another organization",
          });
          continue;
        }
        if (key.revoked === true) changed += await orgs.revokeApiKey(trx, { hash }, now);
      }
      for (const e of org.engagements) {
        const engagement = { organizationId: org.id, ...e, until: e.until ?? null };
        if (await orgs.upsertEngagement(trx, engagement)) changed++;
      }
    }
    if (problems.length > 0) throw new ValidationError(problems); // rolls the load back
    let eligibilityChanged = 0;
    if (referenceChanged > 0) {
      const ref = new ReferenceData((await references.snapshot()).snapshot);
      eligibilityChanged = await recomputeEligibility(createEligibilityStore(trx), ref);
    }
    return { changed, eligibilityChanged };
  });
}
