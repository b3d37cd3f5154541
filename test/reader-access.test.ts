import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountabilityFixture, READER_KEYS } from "./helpers/accountability.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v1Record, v2Record } from "./helpers/fixture.js";

/** CONTRACT section 4: project and operator keys read; they never submit. */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ fixture: accountabilityFixture() });
});
afterAll(async () => t?.close());

const FORBIDDEN = {
  statusCode: 403,
  error: "Forbidden",
  message: "This API key cannot submit reports",
};

const stored = async () => {
  const count = async (table: "reports" | "report_versions" | "submissions") =>
    (
      await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(
        t.database.db,
      )
    ).rows[0]?.n;
  return [await count("reports"), await count("report_versions"), await count("submissions")];
};

describe("submissions by project and operator keys", () => {
  it("are refused with 403 whatever the body, dry runs too, and store no report, only the log line", async () => {
    const before = await stored();
    const attempts = [
      { url: "/api/v2/report", payload: { data: [v2Record()] } },
      { url: "/api/v1/report", payload: { data: [v1Record()] } },
      { url: "/api/v2/report", payload: { data: [v2Record()] }, headers: { "x-dry-run": "true" } },
      { url: "/api/v1/report", payload: { data: [v1Record()] }, headers: { "x-dry-run": "TRUE" } },
      { url: "/api/v2/report", payload: { data: [v2Record()] }, headers: { "x-dry-run": "maybe" } },
      { url: "/api/v2/report", payload: { data: [] } },
      { url: "/api/v1/report", payload: { nothing: true } },
      {
        url: "/api/v2/report",
        payload: "{not json",
        headers: { "content-type": "application/json" },
      },
      { url: "/api/v1/report", payload: "text", headers: { "content-type": "text/plain" } },
    ];
    const logged: string[] = [];
    for (const key of [READER_KEYS.chainlinkLabs, READER_KEYS.operator]) {
      for (const attempt of attempts) {
        const response = await t.request({ method: "POST", key, ...attempt });
        expect(response.statusCode, `${attempt.url} ${response.body}`).toBe(403);
        expect(response.json()).toEqual(FORBIDDEN);
        logged.push(String(response.headers["x-submission-id"]));
      }
    }
    // No report nor version; each attempt is a rejected line of its own organization's log
    // (CONTRACT section 5), whose one problem names why.
    const [reports, versions, submissions] = before;
    expect(await stored()).toEqual([reports, versions, (submissions ?? 0) + logged.length]);
    const lines = await sql<{ organization_id: string; status: string; problems: unknown }>`
      select organization_id, status, problems from submissions
      where id = any(${logged}::uuid[])`.execute(t.database.db);
    expect(lines.rows).toHaveLength(logged.length);
    for (const line of lines.rows) {
      expect(["chainlink-labs", "platform"]).toContain(line.organization_id);
      expect(line.status).toBe("rejected");
      expect(line.problems).toEqual([
        { path: null, message: FORBIDDEN.message, code: "key_may_not_submit" },
      ]);
    }
    // A market maker's key still submits.
    const accepted = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      payload: { data: [v2Record()] },
    });
    expect(accepted.statusCode).toBe(201);
  });

  it("need a valid key first: a missing or revoked project key is a 401", async () => {
    for (const key of [READER_KEYS.chainlinkLabsRevoked, null]) {
      for (const request of [
        { method: "POST" as const, url: "/api/v2/report", payload: { data: [v2Record()] } },
        { method: "GET" as const, url: "/api/v1/reports" },
        { method: "GET" as const, url: "/api/v1/projects" },
      ]) {
        const response = await t.request({ ...request, key });
        expect(response.statusCode).toBe(401);
        expect(response.json()).not.toHaveProperty("error");
      }
    }
  });
});

describe("GET /api/v1/projects for project and operator keys", () => {
  it("lists a project's coins' active engagements of every market maker", async () => {
    const response = await t.request({
      method: "GET",
      url: "/api/v1/projects",
      key: READER_KEYS.chainlinkLabs,
    });
    expect(response.json().items).toEqual([
      {
        organizationId: "acme",
        organizationName: "Acme Market Making",
        id: "chainlink",
        symbol: "LINK",
        name: "Chainlink",
        engagementType: "project",
        engagedSince: "2024-01-01",
        engagedUntil: null,
      },
      expect.objectContaining({ organizationId: "globex", id: "chainlink" }),
    ]);
  });

  it("lists every active engagement for the operator, by project then organization", async () => {
    const response = await t.request({
      method: "GET",
      url: "/api/v1/projects",
      key: READER_KEYS.operator,
    });
    const items = response.json().items as { organizationId: string; id: string }[];
    expect(items.map((i) => `${i.id} ${i.organizationId}`)).toEqual([
      "chainlink acme",
      "chainlink globex",
      "uniswap acme",
    ]);
  });

  it("answers a market maker's key as before, and exchanges and markets alike for all", async () => {
    const acme = await t.request({ method: "GET", url: "/api/v1/projects", key: KEYS.acme });
    expect(acme.json().items.map((p: Record<string, unknown>) => Object.keys(p))).toEqual([
      ["id", "symbol", "name", "engagementType", "engagedSince", "engagedUntil"],
      ["id", "symbol", "name", "engagementType", "engagedSince", "engagedUntil"],
    ]);
    for (const url of ["/api/v1/exchanges", "/api/v1/markets"]) {
      const bodies = await Promise.all(
        [KEYS.acme, READER_KEYS.chainlinkLabs, READER_KEYS.operator].map(
          async (key) => (await t.request({ method: "GET", url, key })).body,
        ),
      );
      expect(new Set(bodies).size).toBe(1);
    }
  });
});
