import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InjectedSession, injectSignIn } from "./helpers/dashboard.js";
import { SCORECARD_KEYS as KEYS, scorecardWorld, type World } from "./helpers/scorecard-world.js";

/** The dashboard's scorecard pages offer their figures as the API's CSV. */
let w: World;
let acme: InjectedSession;
let project: InjectedSession;
beforeAll(async () => {
  w = await scorecardWorld();
  w.setClock(new Date("2025-03-10T00:00:00Z"));
  acme = await injectSignIn(w.t, KEYS.acme);
  project = await injectSignIn(w.t, KEYS.project);
});
afterAll(async () => w?.t.close());

const RANGE = "dateGte=2025-03-01&dateLte=2025-03-05";

/** The href of the page's "Download CSV" link (HTML-escaped ampersands undone). */
function downloadLink(body: string): string {
  const href = /<a class="button" href="([^"]+)">Download CSV<\/a>/.exec(body)?.[1];
  expect(href, "no Download CSV link").toBeDefined();
  return String(href).replaceAll("&amp;", "&");
}

/** The API's answer to the same query with the caller's key, as CSV. */
async function apiCsv(path: string, query: string, key: string): Promise<string> {
  const response = await w.t.request({
    method: "GET",
    url: `${path}?${query}`,
    key,
    headers: { accept: "text/csv" },
  });
  expect(response.statusCode).toBe(200);
  return response.body;
}

describe("Download CSV on the scorecard pages", () => {
  it("a project's coin page: its market makers' scorecards, the API's file", async () => {
    const page = await project.get(`/app/coins/chainlink?${RANGE}`);
    const link = downloadLink(page.body);
    expect(link).toBe(`/app/scorecards.csv?baseCoinId=chainlink&${RANGE}`);
    const file = await project.get(link);
    expect(file.statusCode).toBe(200);
    expect(file.headers["content-type"]).toBe("text/csv; charset=utf-8");
    expect(file.headers["content-disposition"]).toBe(
      'attachment; filename="scorecards-2025-03-01-2025-03-05.csv"',
    );
    expect(file.body).toBe(
      await apiCsv("/api/v1/scorecards", `baseCoinId=chainlink&${RANGE}`, KEYS.project),
    );
    expect(file.body).toContain("\r\n2025-03-01,2025-03-05,acme,");
    expect(file.body).toContain("\r\n2025-03-01,2025-03-05,globex,");
  });

  it("a market maker's markets page: its own markets of the coin", async () => {
    const page = await acme.get(`/app/coins/chainlink/acme?${RANGE}`);
    const link = downloadLink(page.body);
    expect(link).toBe(`/app/scorecards.csv?baseCoinId=chainlink&organizationId=acme&${RANGE}`);
    const file = await acme.get(link);
    const rows = file.body.trimEnd().split("\r\n").slice(1);
    expect(rows).toHaveLength(7);
    expect(rows.every((r) => r.startsWith("2025-03-01,2025-03-05,acme,"))).toBe(true);
  });

  it("the coverage calendar: day by day", async () => {
    const page = await acme.get(`/app/coins/uniswap/acme/calendar?${RANGE}`);
    const link = downloadLink(page.body);
    expect(link).toBe(`/app/scorecards/daily.csv?baseCoinId=uniswap&organizationId=acme&${RANGE}`);
    const file = await acme.get(link);
    expect(file.headers["content-disposition"]).toBe(
      'attachment; filename="scorecards-daily-2025-03-01-2025-03-05.csv"',
    );
    expect(file.body).toBe(
      await apiCsv(
        "/api/v1/scorecards/daily",
        `baseCoinId=uniswap&organizationId=acme&${RANGE}`,
        KEYS.acme,
      ),
    );
    expect(file.body.trimEnd().split("\r\n")).toHaveLength(1 + 5);
  });

  it("keeps the signed-in scope: another market maker's id narrows to nothing", async () => {
    const file = await acme.get(`/app/scorecards.csv?organizationId=globex&${RANGE}`);
    expect(file.statusCode).toBe(200);
    expect(file.body.trimEnd().split("\r\n")).toHaveLength(1);
  });

  it("takes the link's ids as given: spaces are part of an id", async () => {
    const file = await project.get(`/app/scorecards.csv?baseCoinId=%20chainlink&${RANGE}`);
    expect(file.statusCode).toBe(200);
    expect(file.body.trimEnd().split("\r\n")).toHaveLength(1);
  });

  it("a bad query is a 400 page naming the problem, not a file", async () => {
    const file = await acme.get("/app/scorecards/daily.csv?dateGte=2025-02-30");
    expect(file.statusCode).toBe(400);
    expect(file.headers["content-type"]).toMatch(/^text\/html/);
    expect(file.body).toContain("Invalid date, expected YYYY-MM-DD");
  });

  it("needs a session", async () => {
    const file = await w.t.request({ method: "GET", url: "/app/scorecards.csv" });
    expect(file.statusCode).not.toBe(200);
    expect(String(file.headers["content-type"])).not.toMatch(/csv/);
  });
});
