import { readFile } from "node:fs/promises";
import { marketMakerCaller } from "../domain/caller.js";
import { utcDate } from "../domain/dates.js";
import { MAX_V2_BATCH } from "../schemas/report.js";
import type { Stores } from "../store/stores.js";
import { type DemoFixture, generateDemoReports } from "./demo-reports.js";
import { scheduleDemoReports } from "./demo-schedule.js";
import { loadFixture } from "./fixtures.js";
import type { Services } from "./index.js";
import { submitReports } from "./submit-reports.js";

export const DEMO_FIXTURE_URL = new URL("../../demo/reference.json", import.meta.url);
export const DEMO_API_KEY = "demo-key-3f9c2b7e41d84a6c9b0e5d1a";
/** The key of the demo's project organization: it reads both market makers' obligations. */
export const DEMO_PROJECT_API_KEY = "demo-project-key-7c41e9a2d05b4f68b3a1";
/** The key of the demo's operator: it reads everything (the dashboard's operator pages). */
export const DEMO_OPERATOR_API_KEY = "demo-operator-key-5b2e8d1c94a7f3e6d0c2";
const DEMO_DAYS = 90;

/** The organizations the demo creates (a database holding others is not a demo database). */
export async function demoOrganizationIds(): Promise<string[]> {
  const fixture = JSON.parse(await readFile(DEMO_FIXTURE_URL, "utf8")) as DemoFixture;
  return fixture.organizations.map((o) => o.id);
}

/**
 * Loads the bundled demo: reference data, organizations, keys and obligations, and 90 days of
 * generated reports per market maker, submitted through the same service market makers use.
 * Each day's reports are submitted at the time they "arrived" (the morning after, or after the
 * deadline for the late ones, see demo-schedule.ts), so that the first accepted time of every
 * report is that arrival. Reports are generated only for an organization that has none yet, so
 * restarting changes nothing.
 */
export async function loadDemo(stores: Stores, services: Services, now: Date) {
  const fixture = JSON.parse(await readFile(DEMO_FIXTURE_URL, "utf8")) as DemoFixture;
  await loadFixture(stores, fixture, now);
  services.referenceData.invalidate();
  let submitted = 0;
  for (const org of fixture.organizations) {
    if ((org.kind ?? "market_maker") !== "market_maker") continue;
    if ((await stores.reports.countOf(org.id)) > 0) continue;
    const records = generateDemoReports({
      fixture,
      organizationId: org.id,
      today: utcDate(now),
      days: DEMO_DAYS,
    });
    for (const arrival of scheduleDemoReports(fixture, org.id, records, now)) {
      const deps = {
        reports: stores.reports,
        referenceData: services.referenceData,
        now: () => arrival.at,
      };
      for (let i = 0; i < arrival.data.length; i += MAX_V2_BATCH) {
        const data = arrival.data.slice(i, i + MAX_V2_BATCH);
        await submitReports(deps, marketMakerCaller(org.id), {
          version: 2,
          body: { data },
          dryRun: false,
        });
        submitted += data.length;
      }
    }
  }
  return { submitted };
}
