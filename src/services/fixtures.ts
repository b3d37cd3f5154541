import { apiKeyPrefix, hashApiKey } from "../domain/api-key.js";
import { describePeriod, overlaps } from "../domain/engagement.js";
import { type Problem, ValidationError } from "../domain/errors.js";
import { ReferenceData, type ReferenceSnapshot } from "../domain/reference-data.js";
import type { Fixture } from "../schemas/fixture.js";
import type { Stores } from "../store/stores.js";
import { recomputeEligibility } from "./eligibility.js";
import { fitObligationsToEngagements } from "./engagements.js";
import { parseFixture } from "./fixture-checks.js";
import { loadObligations } from "./fixture-obligations.js";
import { recordFixtureDepth } from "./quality-fixture.js";
import { recomputePendingDepthFlags } from "./quality-recompute.js";

const EMPTY: ReferenceSnapshot = { coins: [], exchanges: [], markets: [] };

export type LoadSummary = { changed: number; eligibilityChanged: number };

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
export function loadFixture(stores: Stores, input: unknown, now: Date): Promise<LoadSummary> {
  return loadFixtureOf(stores, () => input, now);
}

/**
 * As loadFixture, of the fixture `fixtureOf` makes from the reference data stored, read under
 * the load's turn: a sync's data fitted to what an import committed while the sync fetched.
 */
export async function loadFixtureOf(
  stores: Stores,
  fixtureOf: (stored: ReferenceSnapshot) => unknown,
  now: Date,
): Promise<LoadSummary> {
  // A serialization failure or a deadlock (with another writer of the same organization or
  // reference rows) aborts one side: the transaction runs the whole load again.
  const summary = await stores.transaction(async (tx) => {
    const references = tx.references;
    await references.takeTurnToChange();
    const stored = (await references.snapshot()).snapshot;
    const fixture = parseFixture(fixtureOf(stored), stored);
    const reference = await references.upsert(referenceSnapshotOf(fixture), now);
    const referenceChanged = reference.changed;
    let changed = referenceChanged;
    const orgs = tx.organizations;
    const problems: Problem[] = [];
    // The reference data as loaded (the fixture's and the stored), read when something needs it.
    const needed =
      referenceChanged > 0 ||
      fixture.organizations.some((o) => o.engagements.some((e) => e.obligations?.length));
    const ref = new ReferenceData(needed ? (await references.snapshot()).snapshot : EMPTY);
    for (const [i, org] of fixture.organizations.entries()) {
      if (await orgs.upsertOrganization(org.id, org.name)) changed++;
      changed += await loadProfile(orgs, org, `organizations.${i}`, problems);
      changed += await loadApiKeys(orgs, org, `organizations.${i}`, now, problems);
      const engagementsChanged = await loadEngagements(orgs, org, `organizations.${i}`, problems);
      changed += engagementsChanged;
      if (engagementsChanged > 0) {
        // An engagement the fixture ends earlier takes its stored obligations with it.
        const fitted = await fitObligationsToEngagements(tx, org.id);
        changed += fitted.obligationsEnded + fitted.obligationsRemoved;
      }
      changed += await loadObligations(tx, org, `organizations.${i}`, ref, problems);
    }
    if (problems.length > 0) throw new ValidationError(problems); // rolls the load back
    let eligibilityChanged = 0;
    if (referenceChanged > 0)
      eligibilityChanged = await recomputeEligibility(tx.eligibility, ref, reference.scope);
    changed += (await recordFixtureDepth(tx, fixture)).length;
    return { changed, eligibilityChanged };
  });
  // After the commit, in short batches: reports of those days are not locked all load long.
  // Days an earlier load left pending (it failed, or its process stopped) are done too.
  await recomputePendingDepthFlags(stores);
  return summary;
}

type FixtureOrganization = Fixture["organizations"][number];

/**
 * Sets the organization's kind (absent: market maker) and owned coins. A project or operator
 * is never engaged: one with stored engagements cannot take that kind.
 */
async function loadProfile(
  orgs: Stores["organizations"],
  org: FixtureOrganization,
  path: string,
  problems: Problem[],
): Promise<number> {
  const kind = org.kind ?? "market_maker";
  if (kind !== "market_maker" && (await orgs.engagements(org.id)).length > 0) {
    problems.push({
      path: `${path}.kind`,
      message: `'${org.id}' has stored engagements; only a market maker is engaged`,
    });
    return 0;
  }
  return orgs.setProfile(org.id, kind, org.coins ?? []);
}

/** Adds the organization's keys (revoking those marked so); returns the rows changed. */
async function loadApiKeys(
  orgs: Stores["organizations"],
  org: FixtureOrganization,
  path: string,
  now: Date,
  problems: Problem[],
): Promise<number> {
  let changed = 0;
  for (const [j, entry] of org.apiKeys.entries()) {
    const key = typeof entry === "string" ? { key: entry } : entry;
    const hash = hashApiKey(key.key);
    const added = await orgs.addApiKey({
      organizationId: org.id,
      hash,
      prefix: apiKeyPrefix(key.key),
      label: key.label ?? "fixture",
    });
    if (added) changed++;
    else if ((await orgs.findApiKeyByHash(hash))?.organizationId !== org.id) {
      // Skipping it silently would leave the fixture's author believing the key is theirs.
      problems.push({
        path: `${path}.apiKeys.${j}`,
        message: "key already belongs to another organization",
      });
      continue;
    }
    if (key.revoked === true) changed += await orgs.revokeApiKey({ hash }, now);
  }
  return changed;
}

/** Upserts the organization's engagements; returns the rows changed. */
async function loadEngagements(
  orgs: Stores["organizations"],
  org: FixtureOrganization,
  path: string,
  problems: Problem[],
): Promise<number> {
  if (org.engagements.length === 0) return 0;
  let changed = 0;
  await orgs.lockOrganization(org.id);
  for (const e of org.engagements) {
    const engagement = { organizationId: org.id, ...e, until: e.until ?? null };
    if (await orgs.upsertEngagement(engagement)) changed++;
  }
  // Stored engagements the fixture does not list may overlap the ones it does.
  const listed = (s: { baseCoinId: string; since: string }) =>
    org.engagements.some((e) => e.baseCoinId === s.baseCoinId && e.since === s.since);
  const stored = (await orgs.engagements(org.id)).filter((s) => !listed(s));
  org.engagements.forEach((e, j) => {
    const clash = stored.find((other) => overlaps(other, { ...e, until: e.until ?? null }));
    if (clash !== undefined) {
      problems.push({
        path: `${path}.engagements.${j}`,
        message: `overlaps the stored ${describePeriod(clash)} of '${org.id}'`,
      });
    }
  });
  return changed;
}
