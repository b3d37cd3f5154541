import { readFileSync } from "node:fs";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addDays } from "../src/domain/dates.js";
import { KPIS, type KpiName } from "../src/domain/obligation.js";
import {
  DEMO_API_KEY,
  DEMO_OPERATOR_API_KEY,
  DEMO_PROJECT_API_KEY,
  loadDemo,
} from "../src/services/demo.js";
import type { DemoFixture, DemoReport } from "../src/services/demo-reports.js";
import { generateDemoReports } from "../src/services/demo-reports.js";
import { scheduleDemoReports } from "../src/services/demo-schedule.js";
import { startTestApp, type TestApp } from "./helpers/app.js";

const fixture = JSON.parse(
  readFileSync(new URL("../demo/reference.json", import.meta.url), "utf8"),
) as DemoFixture;

const NOW = new Date("2026-11-23T20:00:00Z");
const TODAY = "2026-11-23";

type Day = { org: string; date: string; late: boolean; failed: KpiName[] } | "missing";

/** Every obligation-market day whose deadline has passed, with what the demo made of it. */
function obligationDays(org: string): Day[] {
  const reports = generateDemoReports({ fixture, organizationId: org, today: TODAY, days: 90 });
  const arrivals = scheduleDemoReports(fixture, org, reports, NOW).flatMap((a) =>
    a.data.map((r) => ({ r, at: a.at })),
  );
  const quote = (r: DemoReport) => r.quoteCoinId ?? r.quoteCoinSymbol?.toUpperCase();
  const days: Day[] = [];
  const engagements = fixture.organizations.find((o) => o.id === org)?.engagements ?? [];
  for (const e of engagements) {
    for (const period of e.obligations ?? []) {
      for (const m of period.markets) {
        for (
          let date = period.since;
          date <= (period.until ?? "2026-11-21");
          date = addDays(date, 1)
        ) {
          if (date < addDays(TODAY, -90) || date > "2026-11-21") continue;
          const found = arrivals.find(
            ({ r }) =>
              r.date === date &&
              r.baseCoinId === e.baseCoinId &&
              r.exchangeId === m.exchangeId &&
              quote(r) === m.quote &&
              r.instrumentType === m.instrumentType,
          );
          if (found === undefined) {
            days.push("missing");
            continue;
          }
          const failed = (Object.entries(period.kpis) as [KpiName, number][])
            .filter(([kpi, threshold]) => {
              const value = (found.r as unknown as Record<string, number>)[KPIS[kpi].metric] ?? 0;
              return KPIS[kpi].bound === "min" ? value < threshold : value > threshold;
            })
            .map(([kpi]) => kpi);
          const deadline = Date.parse(`${addDays(date, 1)}T12:00:00Z`);
          days.push({ org, date, late: found.at.getTime() > deadline, failed });
        }
      }
    }
  }
  return days;
}

describe("the demo's obligations", () => {
  it("has an operator whose key opens the dashboard's operator pages", () => {
    const operator = fixture.organizations.find((o) => o.id === "demo-operator");
    expect(operator).toMatchObject({ kind: "operator", apiKeys: [DEMO_OPERATOR_API_KEY] });
    expect(DEMO_OPERATOR_API_KEY.length).toBeGreaterThanOrEqual(32);
  });

  it("has a project organization owning the coins both market makers owe obligations for", () => {
    const project = fixture.organizations.find((o) => o.id === "demo-project");
    expect(project).toMatchObject({ kind: "project", apiKeys: [DEMO_PROJECT_API_KEY] });
    expect(DEMO_PROJECT_API_KEY.length).toBeGreaterThanOrEqual(32);
    for (const org of ["demo-mm", "other-mm"]) {
      const owed = fixture.organizations
        .find((o) => o.id === org)
        ?.engagements.filter((e) => (e.obligations ?? []).length > 0)
        .map((e) => e.baseCoinId);
      expect(owed?.length).toBeGreaterThanOrEqual(2);
      for (const coin of owed ?? []) expect(project?.coins).toContain(coin);
    }
  });

  it("makes a realistic mix: most days met, some missed, a few missing, a few late", () => {
    const days = [...obligationDays("demo-mm"), ...obligationDays("other-mm")];
    const reported = days.filter((d) => d !== "missing");
    const share = (n: number) => n / days.length;
    expect(days.length).toBeGreaterThan(500);
    expect(share(reported.filter((d) => d.failed.length === 0).length)).toBeGreaterThan(0.8);
    expect(share(reported.filter((d) => d.failed.length > 0).length)).toBeGreaterThan(0.03);
    expect(share(reported.filter((d) => d.failed.length > 0).length)).toBeLessThan(0.15);
    expect(share(days.filter((d) => d === "missing").length)).toBeGreaterThan(0.01);
    expect(share(days.filter((d) => d === "missing").length)).toBeLessThan(0.06);
    expect(share(reported.filter((d) => d.late).length)).toBeGreaterThan(0.02);
    expect(share(reported.filter((d) => d.late).length)).toBeLessThan(0.1);
  });

  it("is deterministic, uploads in the morning after, and never after now", () => {
    const reports = generateDemoReports({
      fixture,
      organizationId: "demo-mm",
      today: TODAY,
      days: 90,
    });
    const once = scheduleDemoReports(fixture, "demo-mm", reports, NOW);
    expect(scheduleDemoReports(fixture, "demo-mm", reports, NOW)).toEqual(once);
    for (const arrival of once) {
      expect(arrival.at.getTime()).toBeLessThanOrEqual(NOW.getTime());
      const time = arrival.at.toISOString().slice(11, 16);
      if (arrival.at.getTime() < NOW.getTime()) expect(time).toBe("06:00");
    }
  });
});

describe("the demo loaded (serve --demo)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      fixture: { coins: [], exchanges: [], markets: [], organizations: [] },
    });
    await loadDemo(t.database.stores, t.services, new Date());
  }, 120_000);
  afterAll(async () => t?.close());

  const obligations = async (key: string) =>
    (
      (await t.request({ method: "GET", url: "/api/v1/obligations", key })).json() as {
        items: { organizationId: string; baseCoinId: string; since: string }[];
      }
    ).items.map((i) => `${i.organizationId} ${i.baseCoinId} ${i.since}`);

  it("shows the project both market makers' obligations, and each market maker its own", async () => {
    expect(await obligations(DEMO_PROJECT_API_KEY)).toEqual([
      "demo-mm chainlink 2026-08-01",
      "demo-mm chainlink 2026-11-01",
      "demo-mm the-graph 2026-07-01",
      "other-mm arbitrum 2026-07-01",
      "other-mm chainlink 2026-08-01",
    ]);
    expect(await obligations(DEMO_API_KEY)).toEqual([
      "demo-mm chainlink 2026-08-01",
      "demo-mm chainlink 2026-11-01",
      "demo-mm the-graph 2026-07-01",
    ]);
  });

  it("stores each report's first accepted time as its arrival: most on time, a few late", async () => {
    const { rows } = await sql<{ late: number; total: number }>`
      select count(*) filter (where created_at > ((date + 1) + time '12:00') at time zone 'UTC')::int as late,
             count(*)::int as total
      from reports where date < current_date - 1`.execute(t.database.db);
    const [counts] = rows;
    expect(counts?.total).toBeGreaterThan(5000);
    expect(counts?.late).toBeGreaterThan(0);
    expect((counts?.late ?? 0) / (counts?.total ?? 1)).toBeLessThan(0.05);
  });
});
