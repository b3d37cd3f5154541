import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InjectedSession, injectSignIn } from "./helpers/dashboard.js";
import { v2Record } from "./helpers/fixture.js";
import { SCORECARD_KEYS, scorecardWorld, type World } from "./helpers/scorecard-world.js";

/**
 * Dashboard addresses no page can have: a NUL or a lone surrogate in a path segment, or a
 * percent-encoding that cannot be decoded, are the dashboard's 404 page, never a 500 or the
 * API's JSON.
 */
let world: World;
const sessions: Record<string, InjectedSession> = {};
beforeAll(async () => {
  world = await scorecardWorld();
  world.setClock(new Date("2025-03-04T13:00:00Z"));
  for (const kind of ["acme", "project", "operator"] as const)
    sessions[kind] = await injectSignIn(world.t, SCORECARD_KEYS[kind]);
});
afterAll(async () => world?.t.close());

const unstorable = ["%00", "%ED%A0%80"];

describe("dashboard addresses that name no page", () => {
  it.each([
    ["acme", "/app/coins/chainlink/acme/markets/binance/{x}/spot"],
    ["acme", "/app/coins/chainlink/acme/markets/{x}/tether/spot"],
    ["acme", "/app/coins/{x}/acme"],
    ["acme", "/app/coins/chainlink/acme/calendar?x={x}"],
    ["project", "/app/coins/chainlink/{x}"],
    ["project", "/app/coins/chainlink/globex/markets/binance/{x}/spot"],
    ["operator", "/app/coins/{x}"],
    ["operator", "/app/coins/{x}/acme/calendar"],
  ])("%s: %s with a NUL or a lone surrogate is a 404 page (200 where it is an ignored parameter)", async (kind, template) => {
    for (const x of unstorable) {
      const response = await sessions[kind]?.get(template.replace("{x}", x));
      // In a path segment it names no page; in a parameter the page ignores, the page is shown.
      const expected = template.includes("?") ? 200 : 404;
      expect(response?.statusCode, `${template} ${x}`).toBe(expected);
      expect(String(response?.headers["content-type"])).toMatch(/^text\/html/);
    }
  });

  it("an operator's coin page for a coin nobody knows is a 404, as a project's is", async () => {
    for (const kind of ["operator", "project"] as const) {
      const response = await sessions[kind]?.get("/app/coins/nonexistent-coin");
      expect(response?.statusCode, kind).toBe(404);
      expect(response?.body).toContain("Coin not found");
    }
    expect((await sessions.operator?.get("/app/coins/chainlink"))?.statusCode).toBe(200);
  });

  it("a market page says, in each chart's box, where its figures are when JavaScript is off", async () => {
    const page = await sessions.acme?.get("/app/coins/chainlink/acme/markets/binance/tether/spot");
    expect(page?.statusCode).toBe(200);
    const notes = page?.body.match(/<noscript><p class="note">The chart is drawn with JavaScript/g);
    expect(notes).toHaveLength(9);
  });

  it("a market maker's page for a coin without obligation markets says so and links to its reports", async () => {
    const own = await sessions.acme?.get("/app/coins/aave/acme");
    expect(own?.statusCode).toBe(200);
    expect(own?.body).toContain("No obligation names a market of Aave for Acme Market Making");
    // Its engagement for Aave has ended: its listing holds no Aave report today, so no link.
    expect(own?.body).toContain(
      "Its reports of Aave are listed only while it is engaged for the coin, and it is not today.",
    );
    expect(own?.body).not.toContain('href="/app/reports?baseCoinId=aave"');
    // Engaged for Uniswap today, with no obligation in the range: the link leads to its reports.
    const engaged = await sessions.acme?.get(
      "/app/coins/uniswap/acme?dateGte=2024-06-01&dateLte=2024-06-30",
    );
    expect(engaged?.body).toContain("No obligation names a market of Uniswap");
    expect(engaged?.body).toContain('href="/app/reports?baseCoinId=uniswap"');
    expect(own?.body).not.toContain("All 0 markets");
    const operator = await sessions.operator?.get("/app/coins/aave/acme");
    expect(operator?.body).toContain('href="/app/reports?baseCoinId=aave&amp;organizationId=acme"');
  });

  it("a market page for a market no obligation names and no report has is a 404", async () => {
    for (const market of ["binance/%E2%82%AC/spot", "kraken/usd/spot", "binance/TETHER/spot"]) {
      const page = await sessions.acme?.get(`/app/coins/chainlink/acme/markets/${market}`);
      expect(page?.statusCode, market).toBe(404);
      expect(page?.body).toContain("Market not found");
    }
    // An obligation market, in a range without reports: its page, with the note.
    const empty = await sessions.acme?.get(
      "/app/coins/chainlink/acme/markets/binance/tether/spot?dateGte=2024-06-01&dateLte=2024-06-30",
    );
    expect(empty?.statusCode).toBe(200);
    expect(empty?.body).toContain("No report in this range.");
    // A page below a coin marks its section in the navigation.
    expect(empty?.body).toContain('<a href="/app/markets" aria-current="true">Markets</a>');
    const project = await sessions.project?.get(
      "/app/coins/chainlink/acme/markets/binance/tether/spot",
    );
    expect(project?.body).toContain('<a href="/app/coins" aria-current="true">Coins</a>');
  });

  it("the breadcrumb names the market maker, not its id, on its market and calendar pages", async () => {
    for (const path of ["markets/binance/tether/spot", "calendar"]) {
      const page = await sessions.project?.get(`/app/coins/chainlink/acme/${path}`);
      const trail = page?.body.match(/<nav aria-label="Breadcrumb"[\s\S]*?<\/nav>/)?.[0];
      expect(trail, path).toContain('<a href="/app/coins/chainlink/acme">Acme Market Making</a>');
    }
  });

  it("a market maker's page totals the days eligible of its markets", async () => {
    const page = await sessions.acme?.get(
      "/app/coins/chainlink/acme?dateGte=2025-03-01&dateLte=2025-03-05",
    );
    const body = page?.body ?? "";
    const lastCell = (row: string) => Number(row.match(/<td class="num">(\d+)<\/td><\/tr>/)?.[1]);
    const tbody = body.slice(body.indexOf("<tbody>"), body.indexOf("</tbody>"));
    const rows = tbody.split("<tr>").slice(1);
    expect(rows.length).toBe(7);
    const total = lastCell(body.slice(body.indexOf("<tfoot>")));
    expect(total).toBeGreaterThan(0);
    expect(total).toBe(rows.reduce((sum, row) => sum + lastCell(row), 0));
  });

  it("offers a project the coins it owns and their market makers as reports filters, no other", async () => {
    const page = await sessions.project?.get("/app/reports");
    const options = (name: string) => {
      const select = page?.body.match(new RegExp(`<select name="${name}">([\\s\\S]*?)</select>`));
      return [...(select?.[1] ?? "").matchAll(/<option value="([^"]+)"/g)].map((m) => m[1]);
    };
    expect(options("baseCoinId")).toEqual(["chainlink"]);
    expect(options("organizationId").sort()).toEqual(["acme", "globex"]);
  });

  it("an address with a trailing slash leads to the page without it", async () => {
    const response = await sessions.acme?.get("/app/overview/?date=2025-03-03");
    expect(response?.statusCode).toBe(301);
    expect(response?.headers.location).toBe("/app/overview?date=2025-03-03");
    // The query is kept whole, a second "?" included.
    const twoMarks = await sessions.acme?.get("/app/overview/?a=1?b=2");
    expect(twoMarks?.headers.location).toBe("/app/overview?a=1?b=2");
    expect((await sessions.acme?.get("/app/nothing-here/"))?.statusCode).toBe(301);
    expect((await sessions.acme?.get("/app/nothing-here"))?.statusCode).toBe(404);
  });

  it("/app/sign-in, reloaded after a failed sign-in, leads back to the form", async () => {
    const response = await world.t.request({ url: "/app/sign-in" });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe("/app");
  });

  it("a path that cannot be decoded is the dashboard's 404 page, with its headers", async () => {
    for (const url of ["/app/coins/%zz/acme", "/app/submissions/%E0%A4%A"]) {
      const response = await sessions.acme?.get(url);
      expect(response?.statusCode).toBe(404);
      expect(String(response?.headers["content-type"])).toMatch(/^text\/html/);
      expect(response?.body).toContain("invalid percent-encoding");
      expect(response?.headers["cache-control"]).toBe("no-store");
      expect(response?.headers["x-frame-options"]).toBe("DENY");
      expect(response?.headers["content-security-policy"]).toBeDefined();
    }
  });

  it("a path segment longer than the router takes is the dashboard's 404 page too", async () => {
    const response = await sessions.acme?.get(`/app/coins/${"a".repeat(16_385)}/acme`);
    expect(response?.statusCode).toBe(404);
    expect(String(response?.headers["content-type"])).toMatch(/^text\/html/);
    expect(response?.body).toContain("longer than any id");
    expect(response?.headers["x-frame-options"]).toBe("DENY");
  });
});

describe("dashboard addresses of markets whose quote a browser would resolve", () => {
  it("a quote of '..' or '~.' has a market page its own links reach", async () => {
    world.setClock(new Date("2025-03-04T13:00:00Z"));
    const data = ["..", "~.", "~x"].map((symbol) =>
      v2Record({ date: "2025-02-10", quoteCoinId: null, quoteCoinSymbol: symbol }),
    );
    const submitted = await world.t.request({
      method: "POST",
      url: "/api/v2/report",
      key: SCORECARD_KEYS.acme,
      payload: { data },
    });
    expect(submitted.statusCode, submitted.body).toBe(201);
    const range = "dateGte=2025-02-01&dateLte=2025-02-28";
    for (const [quote, segment] of [
      ["..", "~.."],
      ["~.", "~~."],
      ["~X", "~X"],
    ]) {
      const path = `/app/coins/chainlink/acme/markets/binance/${segment}/spot`;
      const page = await sessions.acme?.get(`${path}?${range}`);
      expect(page?.statusCode, path).toBe(200);
      expect(page?.body).toContain(`binance · ${quote} · spot`);
      // Its range links lead to itself.
      expect(page?.body).toContain(`href="${path}?dateGte=`);
    }
  });
});
