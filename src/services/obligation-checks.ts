import type { EngagementPeriod } from "../domain/engagement.js";
import { describePeriod } from "../domain/engagement.js";
import type { Problem } from "../domain/errors.js";
import { type ObligationPeriod, obligationsOverlap, samePeriod } from "../domain/obligation.js";
import {
  describeObligation,
  engagementHolding,
  marketProblem,
  overlappingPeriod,
} from "../domain/obligation-rules.js";
import { type ReferenceData, unknownCoin } from "../domain/reference-data.js";

/** One period to be written, where the input holds it, and the engagements that may hold it. */
export type PeriodEntry = {
  /** `organizations.0.engagements.1.obligations.0` in a fixture; "" for a single period. */
  path: string;
  period: ObligationPeriod;
  engagements: readonly EngagementPeriod[];
};

const at = (path: string, sub: string) => (path === "" ? sub : `${path}.${sub}`);

/**
 * Every problem of periods about to be written, in input order, each naming its entry: an
 * unknown coin or market, a period outside its engagement, one listed twice in the input, or
 * one overlapping another period of the same organization and coin (stored, or earlier in the
 * same input; a stored period with the same `since` is the same period, an update). `stored`
 * holds the organization's stored periods.
 */
export function obligationProblems(
  entries: readonly PeriodEntry[],
  ref: ReferenceData,
  stored: readonly ObligationPeriod[],
): Problem[] {
  const problems: Problem[] = [];
  // Stored periods the input lists again are replaced by it, so they overlap nothing.
  const kept = stored.filter((p) => !entries.some((e) => samePeriod(e.period, p)));
  entries.forEach(({ path, period, engagements }, i) => {
    if (!ref.coins.has(period.baseCoinId)) {
      problems.push({
        path: at(path, "baseCoinId"),
        message: unknownCoin(period.baseCoinId, ref.coins.size),
      });
      return;
    }
    period.markets.forEach((market, j) => {
      const message = marketProblem(market, period.baseCoinId, ref);
      if (message !== undefined) problems.push({ path: at(path, `markets.${j}`), message });
    });
    if (engagementHolding(period, engagements) === undefined) {
      const own = engagements.filter((e) => e.baseCoinId === period.baseCoinId);
      const message =
        own.length === 0
          ? `${describeObligation(period)}: '${period.organizationId}' has no engagement for '${period.baseCoinId}'`
          : `${describeObligation(period)} lies outside the ${own.map(describePeriod).join(", ")}`;
      problems.push({ path: at(path, "since"), message });
    }
    const clash = clashMessage(period, entries.slice(0, i), kept);
    if (clash !== undefined) problems.push({ path: path === "" ? "since" : path, message: clash });
  });
  return problems;
}

/**
 * Why a period clashes with the input's earlier periods or the stored ones: the same period
 * listed again (naming the first), or one sharing a day with it; undefined when none does.
 */
function clashMessage(
  period: ObligationPeriod,
  earlier: readonly PeriodEntry[],
  stored: readonly ObligationPeriod[],
): string | undefined {
  const duplicate = earlier.find((other) => samePeriod(other.period, period));
  if (duplicate !== undefined) return `duplicate of ${duplicate.path}`;
  const overlapping = earlier.find((other) => obligationsOverlap(other.period, period));
  if (overlapping !== undefined) return `overlaps ${overlapping.path}`;
  const clash = overlappingPeriod(period, stored);
  if (clash === undefined) return undefined;
  return `overlaps the stored ${describeObligation(clash)} of '${period.organizationId}' (end it first)`;
}
