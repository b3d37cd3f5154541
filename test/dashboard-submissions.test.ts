import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InjectedSession, injectSignIn } from "./helpers/dashboard.js";
import { KEYS } from "./helpers/fixture.js";
import { tableRows } from "./helpers/html-table.js";
import { SCORECARD_KEYS, scorecardWorld, type World } from "./helpers/scorecard-world.js";
import { rejectedBatch } from "./helpers/submission-history.js";

let world: World;
let acme: InjectedSession;
let rejectedId: string;
beforeAll(async () => {
  world = await scorecardWorld();
  rejectedId = await rejectedBatch(world);
  world.setClock(new Date("2025-03-08T11:00:00Z"));
  acme = await injectSignIn(world.t, SCORECARD_KEYS.acme);
});
afterAll(async () => world?.t.close());

const REJECTED_ROW =
  "2025-03-08 10:00:00 UTC | v2 | No | Rejected | 3 | 0 | 0 | 2 | — | nightly-2025-03-07";
const CORRECTION_ROW = "2025-03-07 09:00:00 UTC | v2 | No | Accepted | 2 | 0 | 2 | 0 | — | —";

describe("the submissions history", () => {
  it("lists the log newest first with the API's figures", async () => {
    const api = (
      await world.t.request({ url: "/api/v1/submissions?pageSize=1", key: KEYS.acme })
    ).json();
    const page = await acme.get("/app/submissions");
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<th scope="col">Idempotency-Key</th>');
    const rows = tableRows(page.body, `Submissions (${api.totalCount} matching)`);
    expect(api.totalCount).toBe(12);
    expect(rows).toHaveLength(12);
    expect(rows.slice(0, 2)).toEqual([REJECTED_ROW, CORRECTION_ROW]);
    expect(page.body).toContain(`href="/app/submissions/${rejectedId}"`);
  });

  it("filters by status and day, and pages, as the API does", async () => {
    const rejected = await acme.get("/app/submissions?status=rejected&dateGte=");
    expect(tableRows(rejected.body, "Submissions (1 matching)")).toEqual([REJECTED_ROW]);
    expect(rejected.body).toContain('<option value="rejected" selected>');
    const accepted = await acme.get(
      "/app/submissions?status=accepted&dateGte=2025-03-07&dateLte=2025-03-08",
    );
    expect(tableRows(accepted.body, "Submissions (1 matching)")).toEqual([CORRECTION_ROW]);
    const paged = await acme.get("/app/submissions?pageSize=5&page=2");
    expect(tableRows(paged.body, "Submissions (12 matching)")).toHaveLength(5);
    expect(paged.body).toContain("Page 2 of 3");
    expect(paged.body).toContain('href="/app/submissions?page=3&amp;pageSize=5"');
  });

  it("says why a page is empty, and offers a page size an address asked for", async () => {
    const past = await acme.get("/app/submissions?page=99");
    expect(past.body).toContain(
      "Page 99 is past the last page (1) of the 12 matching submissions.",
    );
    expect(past.body).toContain('href="/app/submissions?page=1&amp;pageSize=50">Last page</a>');
    const reversed = await acme.get("/app/submissions?dateGte=2025-03-08&dateLte=2025-03-01");
    expect(reversed.body).toContain("From (2025-03-08) is after To (2025-03-01)");
    const seven = await acme.get("/app/submissions?pageSize=7");
    expect(seven.body).toContain('<option value="7" selected>7</option>');
    expect(tableRows(seven.body, "Submissions (12 matching)")).toHaveLength(7);
  });

  it("answers a bad filter with the API's 400 problem", async () => {
    const page = await acme.get("/app/submissions?status=pending");
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain("status: ");
  });
});

describe("one submission", () => {
  it("shows a rejected submission's problems with their codes", async () => {
    const page = await acme.get(`/app/submissions/${rejectedId}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("<h1>Submission of 2025-03-08 10:00:00 UTC</h1>");
    expect(tableRows(page.body, "Problems (2)")).toEqual([
      "data.0.date | Invalid date, expected YYYY-MM-DD | invalid_date",
      "data.2.baseCoinId | Base coin with id 'chainlnk' does not match any valid ticker id | unknown_base_coin",
    ]);
    expect(page.body).toContain(`<dd>${rejectedId}</dd>`);
    expect(page.body).toContain("<dd>nightly-2025-03-07</dd>");
  });

  it("shows an accepted one without problems", async () => {
    const list = (
      await world.t.request({ url: "/api/v1/submissions?status=accepted", key: KEYS.acme })
    ).json();
    const page = await acme.get(`/app/submissions/${list.items[0].id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("<h1>Submission of 2025-03-07 09:00:00 UTC</h1>");
    expect(page.body).toContain("Accepted: no problem.");
  });

  it("is the dashboard's 404 page for another organization's submission or a made-up id", async () => {
    const globex = (
      await world.t.request({ url: "/api/v1/submissions?pageSize=1", key: KEYS.globex })
    ).json();
    for (const id of [globex.items[0].id, "not-a-submission"]) {
      const page = await acme.get(`/app/submissions/${id}`);
      expect(page.statusCode).toBe(404);
      expect(page.body).toContain("<h1>Not found</h1>");
      expect(page.body).toContain("Submission not found");
    }
  });
});

describe("access by caller kind", () => {
  it("links the page for a market maker only; other kinds get a 403", async () => {
    expect((await acme.get("/app/overview")).body).toContain('href="/app/submissions"');
    for (const key of [SCORECARD_KEYS.project, SCORECARD_KEYS.operator]) {
      const session = await injectSignIn(world.t, key);
      const home = await session.get("/app/reports");
      expect(home.body).not.toContain('href="/app/submissions"');
      expect((await session.get("/app/submissions")).statusCode).toBe(403);
      expect((await session.get(`/app/submissions/${rejectedId}`)).statusCode).toBe(403);
    }
  });
});
