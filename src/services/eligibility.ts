import { addDays } from "../domain/dates.js";
import { eligibilityReasonOf, matchMarket } from "../domain/eligibility.js";
import type { ReferenceData } from "../domain/reference-data.js";
import type {
  EligibilityScope,
  EligibilityStore,
  PairEligibility,
} from "../store/eligibility-store.js";

/**
 * Re-evaluates the eligibility of the stored reports against the given reference data, pair
 * by pair (one evaluation of the domain rule per distinct market pair), and writes the reports
 * whose eligibility changed. Returns how many changed. With a scope (what a reference-data
 * load changed), only the reports in it: the others' eligibility cannot have changed, and a
 * load holds submissions back until it commits.
 */
export async function recomputeEligibility(
  store: EligibilityStore,
  ref: ReferenceData,
  scope?: EligibilityScope,
): Promise<number> {
  const pairs = await store.reportedPairs(scope);
  const evaluated: PairEligibility[] = pairs.map((pair) => {
    const match = matchMarket(pair, ref);
    if ("reason" in match) {
      return { pair, collectedSince: null, reasonBefore: match.reason, reasonFrom: match.reason };
    }
    const since = match.collectedSince;
    return {
      pair,
      collectedSince: since,
      reasonBefore: eligibilityReasonOf(addDays(since, -1), match),
      reasonFrom: eligibilityReasonOf(since, match),
    };
  });
  return store.apply(evaluated, scope !== undefined);
}
