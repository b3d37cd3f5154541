import type { EngagementPeriod } from "../domain/engagement.js";
import { describePeriod } from "../domain/engagement.js";
import type { Problem } from "../domain/errors.js";
import { type ObligationPeriod, obligationsOverlap } from "../domain/obligation.js";
import {
  describeObligation,
  engagementHolding,
  marketProblem,
  overlappingPeriod,
} from "../domain/obligation-rules.js";
import type { ReferenceData } from "../domain/reference-data.js";

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
 * unknown coin or market, a period outside its engagement, or one overlapping another period
 * of the same organization and coin (stored, or earlier in the same input; the same `since`
 * is the same period, an update). `stored` holds the organization's stored periods.
 */
export function obligationProblems(
  entries: readonly PeriodEntry[],
  ref: ReferenceData,
  stored: readonly ObligationPeriod[],
): Problem[] {
  const problems: Problem[] = [];
  entries.forEach(({ path, period, engagements }, i) => {
    if (!ref.coins.has(period.baseCoinId)) {
      problems.push({
        path: at(path, "baseCoinId"),
        message: `unknown coin '${period.baseCoinId}'`,
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
    const earlier = entries.findIndex(
      (other, k) => k < i && obligationsOverlap(other.period, period),
    );
    const input = entries[earlier];
    if (input !== undefined) {
      problems.push({ path: path === "" ? "since" : path, message: `overlaps ${input.path}` });
      return;
    }
    const listed = (p: ObligationPeriod) =>
      entries.some(
        (e) =>
          e.period.organizationId === p.organizationId &&
          e.period.baseCoinId === p.baseCoinId &&
          e.period.since === p.since,
      );
    const clash = overlappingPeriod(
      period,
      stored.filter((p) => !listed(p)),
    );
    if (clash !== undefined) {
      problems.push({
        path: path === "" ? "since" : path,
        message: `overlaps the stored ${describeObligation(clash)} of '${period.organizationId}' (end it first)`,
      });
    }
  });
  return problems;
}
