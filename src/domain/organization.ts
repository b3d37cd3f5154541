import type { OrganizationKind } from "./caller.js";
import type { Problem } from "./errors.js";
import { unknownCoin } from "./reference-data.js";

/** An organization's kind and coins as given (fixture entry or `org create`). */
export type OrganizationProfile = {
  kind: OrganizationKind;
  coins: readonly string[];
  /** How many engagements it has (listed, or stored). */
  engagements: number;
};

/**
 * The kind rules of CONTRACT section 4: a project owns at least one coin, and only a project
 * owns coins; only a market maker is engaged (the others submit nothing). Paths are relative
 * to the organization (`coins.0`, `engagements`); coins must be known.
 */
export function organizationProfileProblems(
  profile: OrganizationProfile,
  knownCoins: ReadonlySet<string>,
): Problem[] {
  const problems: Problem[] = [];
  if (profile.kind === "project") {
    if (profile.coins.length === 0) {
      problems.push({ path: "coins", message: "a project owns at least one base coin" });
    }
    profile.coins.forEach((coin, i) => {
      if (!knownCoins.has(coin))
        problems.push({ path: `coins.${i}`, message: unknownCoin(coin, knownCoins.size) });
      else if (profile.coins.indexOf(coin) < i) {
        problems.push({
          path: `coins.${i}`,
          message: `duplicate of coins.${profile.coins.indexOf(coin)}`,
        });
      }
    });
  } else if (profile.coins.length > 0) {
    problems.push({
      path: "coins",
      message: `only a project owns coins (this is a ${profile.kind})`,
    });
  }
  if (profile.kind !== "market_maker" && profile.engagements > 0) {
    problems.push({
      path: "engagements",
      message: `a ${profile.kind} organization has no engagements (only market makers are engaged for a coin)`,
    });
  }
  return problems;
}
