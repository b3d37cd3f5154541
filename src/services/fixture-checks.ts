import type { z } from "zod";
import { overlaps } from "../domain/engagement.js";
import { type Problem, ValidationError } from "../domain/errors.js";
import { organizationProfileProblems } from "../domain/organization.js";
import type { ReferenceSnapshot } from "../domain/reference-data.js";
import {
  coinSchema,
  exchangeSchema,
  type Fixture,
  fixtureSchema,
  marketSchema,
  organizationSchema,
} from "../schemas/fixture.js";
import { problemsOf } from "../schemas/problems.js";
import { depthSnapshotSchema, type FixtureDepthSnapshot } from "../schemas/quality.js";
import { zod3Messages } from "../schemas/zod-messages.js";
import { depthSnapshotProblems } from "./quality-fixture.js";

type Entries<T> = readonly (T | undefined)[];
/** A fixture's sections, with `undefined` where an entry is malformed (indexes kept). */
type FixtureEntries = {
  coins: Entries<Fixture["coins"][number]>;
  exchanges: Entries<Fixture["exchanges"][number]>;
  markets: Entries<Fixture["markets"][number]>;
  organizations: Entries<Fixture["organizations"][number]>;
  depthSnapshots?: Entries<FixtureDepthSnapshot>;
};

/**
 * Parses and checks a fixture as a whole; throws a ValidationError naming every bad entry.
 * Cross-entry rules (duplicates, references, instrument types, overlaps) also run when some
 * entries are malformed, over the well-formed ones, so that one load lists every problem.
 */
export function parseFixture(input: unknown, known: ReferenceSnapshot): Fixture {
  const parsed = fixtureSchema.safeParse(input, zod3Messages);
  const problems = parsed.success ? [] : problemsOf(parsed.error);
  problems.push(...crossEntryProblems(parsed.success ? parsed.data : entriesOf(input), known));
  if (!parsed.success || problems.length > 0) throw new ValidationError(problems);
  return parsed.data;
}

/** The entries of each section that are well-formed on their own. */
function entriesOf(input: unknown): FixtureEntries {
  const record =
    typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {};
  const section = <T>(name: string, schema: z.ZodType<T>): Entries<T> => {
    const list = record[name];
    return Array.isArray(list)
      ? list.map((entry) => schema.safeParse(entry, zod3Messages).data)
      : [];
  };
  return {
    coins: section("coins", coinSchema),
    exchanges: section("exchanges", exchangeSchema),
    markets: section("markets", marketSchema),
    organizations: section("organizations", organizationSchema),
    depthSnapshots: section("depthSnapshots", depthSnapshotSchema),
  };
}

function crossEntryProblems(fixture: FixtureEntries, known: ReferenceSnapshot): Problem[] {
  const coins = new Set([
    ...known.coins.map((c) => c.id),
    ...present(fixture.coins).map(([, c]) => c.id),
  ]);
  // The fixture's version of an exchange is the one its markets will be checked against.
  const exchanges = new Map<string, { spot: boolean; derivatives: boolean }>([
    ...known.exchanges.map((e) => [e.id, e] as const),
    ...present(fixture.exchanges).map(([, e]) => [e.id, e] as const),
  ]);
  return [
    ...duplicateProblems(fixture),
    ...marketProblems(fixture, coins, exchanges),
    ...exchangeFlagProblems(fixture, known),
    ...engagementProblems(fixture, coins),
    ...kindProblems(fixture, coins),
    ...depthSnapshotProblems(fixture.depthSnapshots ?? [], [
      ...known.markets,
      ...present(fixture.markets).map(([, m]) => m),
    ]),
  ];
}

const present = <T>(entries: Entries<T>) =>
  entries.flatMap((entry, i) => (entry === undefined ? [] : [[i, entry] as const]));

/**
 * Entries listed twice: coins, exchanges, markets (by key), organizations, API keys, and an
 * organization's engagements (by coin and `since`, which name one engagement).
 */
function duplicateProblems(fixture: FixtureEntries): Problem[] {
  const problems: Problem[] = [];
  const unique = <T>(section: string, keyOf: (entry: T) => string, entries: Entries<T>) => {
    const seen = new Map<string, number>();
    for (const [i, entry] of present(entries)) {
      const key = keyOf(entry);
      const first = seen.get(key);
      if (first !== undefined)
        problems.push({ path: `${section}.${i}`, message: `duplicate of ${section}.${first}` });
      else seen.set(key, i);
    }
  };
  unique("coins", (c) => c.id, fixture.coins);
  unique("exchanges", (e) => e.id, fixture.exchanges);
  unique(
    "markets",
    (m) => [m.exchangeId, m.baseCoinId, m.instrumentType, m.quoteSymbol.toUpperCase()].join(" "),
    fixture.markets,
  );
  unique("organizations", (o) => o.id, fixture.organizations);
  // Loaded one after the other, the last would silently replace the first (and strand the
  // obligation periods listed inside it), and each load would change the row again.
  for (const [i, o] of present(fixture.organizations))
    unique(`organizations.${i}.engagements`, (e) => `${e.baseCoinId} ${e.since}`, o.engagements);
  // One key, one owner: a key listed twice (in one organization or two) is ambiguous.
  const keys = new Map<string, string>();
  for (const [i, o] of present(fixture.organizations)) {
    o.apiKeys.forEach((entry, j) => {
      const key = typeof entry === "string" ? entry : entry.key;
      const path = `organizations.${i}.apiKeys.${j}`;
      const first = keys.get(key);
      if (first !== undefined) problems.push({ path, message: `duplicate of ${first}` });
      else keys.set(key, path);
    });
  }
  return problems;
}

/** Markets on unknown exchanges or coins, or of a type their exchange does not support. */
function marketProblems(
  fixture: FixtureEntries,
  coins: Set<string>,
  exchanges: Map<string, { spot: boolean; derivatives: boolean }>,
): Problem[] {
  const problems: Problem[] = [];
  for (const [i, m] of present(fixture.markets)) {
    const exchange = exchanges.get(m.exchangeId);
    if (exchange === undefined)
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
    const supported = m.instrumentType === "spot" ? exchange?.spot : exchange?.derivatives;
    if (supported === false) {
      const flag = m.instrumentType === "spot" ? "spot" : "derivatives";
      problems.push({
        path: `markets.${i}.instrumentType`,
        message: `${m.instrumentType} market ${m.baseCoinId}/${m.quoteSymbol} on exchange '${m.exchangeId}', which does not support it (${flag}: false)`,
      });
    }
  }
  return problems;
}

/** An exchange's new flags must still hold for the markets already stored under it. */
function exchangeFlagProblems(fixture: FixtureEntries, known: ReferenceSnapshot): Problem[] {
  const problems: Problem[] = [];
  for (const [i, e] of present(fixture.exchanges)) {
    for (const [flag, type] of [
      ["spot", "spot"],
      ["derivatives", "perp"],
    ] as const) {
      const stored = known.markets.find((m) => m.exchangeId === e.id && m.instrumentType === type);
      if (!e[flag] && stored !== undefined) {
        problems.push({
          path: `exchanges.${i}.${flag}`,
          message: `exchange '${e.id}' has stored ${type} markets (${stored.baseCoinId}/${stored.quoteSymbol}); ${flag} cannot be false`,
        });
      }
    }
  }
  return problems;
}

/** Engagements for unknown coins, or overlapping an earlier one of the same organization. */
function engagementProblems(fixture: FixtureEntries, coins: Set<string>): Problem[] {
  const problems: Problem[] = [];
  for (const [i, o] of present(fixture.organizations)) {
    o.engagements.forEach((e, j) => {
      const path = `organizations.${i}.engagements.${j}`;
      if (!coins.has(e.baseCoinId)) {
        problems.push({ path: `${path}.baseCoinId`, message: `unknown coin '${e.baseCoinId}'` });
      }
      const period = { ...e, until: e.until ?? null };
      const earlier = o.engagements.findIndex(
        (other, k) => k < j && overlaps({ ...other, until: other.until ?? null }, period),
      );
      if (earlier !== -1) {
        problems.push({
          path,
          message: `overlaps organizations.${i}.engagements.${earlier} (one engagement per organization and coin on any day)`,
        });
      }
    });
  }
  return problems;
}

/** Kinds and coins: a project owns known coins; only market makers are engaged. */
function kindProblems(fixture: FixtureEntries, coins: Set<string>): Problem[] {
  return present(fixture.organizations).flatMap(([i, o]) =>
    organizationProfileProblems(
      { kind: o.kind ?? "market_maker", coins: o.coins ?? [], engagements: o.engagements.length },
      coins,
    ).map((p) => ({ ...p, path: `organizations.${i}.${p.path}` })),
  );
}
