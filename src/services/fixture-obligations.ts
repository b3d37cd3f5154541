import type { Problem } from "../domain/errors.js";
import type { ReferenceData } from "../domain/reference-data.js";
import type { Fixture } from "../schemas/fixture.js";
import type { Stores } from "../store/stores.js";
import { obligationProblems, type PeriodEntry } from "./obligation-checks.js";

/**
 * Upserts the obligation periods listed inside an organization's engagements (each must lie
 * in the engagement that lists it); returns the periods changed. Problems are collected, not
 * thrown, so that the load names every bad entry before it rolls back.
 */
export async function loadObligations(
  stores: Stores,
  org: Fixture["organizations"][number],
  path: string,
  ref: ReferenceData,
  problems: Problem[],
): Promise<number> {
  const entries: PeriodEntry[] = org.engagements.flatMap((e, j) =>
    (e.obligations ?? []).map((o, k) => ({
      path: `${path}.engagements.${j}.obligations.${k}`,
      period: { organizationId: org.id, baseCoinId: e.baseCoinId, ...o, until: o.until ?? null },
      engagements: [{ baseCoinId: e.baseCoinId, since: e.since, until: e.until ?? null }],
    })),
  );
  if (entries.length === 0) return 0;
  const stored = await stores.obligations.list({ kind: "organization", organizationId: org.id });
  const found = obligationProblems(entries, ref, stored);
  if (found.length > 0) {
    problems.push(...found);
    return 0;
  }
  let changed = 0;
  for (const entry of entries) if (await stores.obligations.upsert(entry.period)) changed++;
  return changed;
}
