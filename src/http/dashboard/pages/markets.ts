import type { FastifyInstance } from "fastify";
import type { Caller } from "../../../domain/caller.js";
import type { Services } from "../../../services/index.js";
import { type Html, html } from "../html.js";
import { sendPage } from "../layout.js";
import type { DashboardPage } from "../page.js";
import {
  calendarPath,
  makerPath,
  marketName,
  marketPath,
  rangeForm,
  rangeOf,
} from "../views/market-links.js";
import { pageStyles } from "../views/own-assets.js";
import { tableRegion } from "../views/table-region.js";
import { sendCalendarPage } from "./calendar.js";
import { summaryCells, summaryHead } from "./coins.js";
import { sendMarketPage } from "./market.js";
import { makerParams, paramsOf, RANGE_PRESETS, sectionOf, trail } from "./page-parts.js";
import { scorecardCsvLink } from "./scorecard-downloads.js";

/** A market maker's own coins: the way into its markets, calendars and charts. */
export const ownMarketsPage: DashboardPage = {
  kinds: ["market_maker"],
  nav: [{ path: "/app/markets", label: "Markets", kinds: ["market_maker"] }],
  routes(app: FastifyInstance, services: Services) {
    app.get("/markets", { schema: { hide: true } }, async (request, reply) => {
      const { caller } = request.dashboard;
      const coins = await services.dashboardPages.coins(caller);
      const items = coins.map(
        (c) =>
          html`<li><a href="${makerPath({ baseCoinId: c.id, organizationId: caller.organizationId })}">${c.name} (${c.symbol})</a> · <a href="${calendarPath({ baseCoinId: c.id, organizationId: caller.organizationId })}">calendar</a></li>`,
      );
      const body =
        coins.length === 0
          ? html`<p class="placeholder">Nothing is owed yet: no obligation names your organization.</p>`
          : html`<p class="lede">The coins you owe reports for: each one's markets, scorecards, calendar and charts.</p><ul>${items}</ul>`;
      return sendPage(request, reply, { title: "Markets", body });
    });
  },
};

/** The Reports page filtered to this market maker's reports of the coin. */
function reportsLink(kind: string, key: { baseCoinId: string; organizationId: string }): string {
  const query = new URLSearchParams({ baseCoinId: key.baseCoinId });
  if (kind !== "market_maker") query.set("organizationId", key.organizationId);
  return `/app/reports?${query}`;
}

/**
 * Where the page's reports are listed. A market maker's listing holds only the coins it is
 * engaged for today (CONTRACT section 2): for any other coin a link would lead to an empty
 * table, so the page says why instead.
 */
async function whereReportsAre(
  services: Services,
  caller: Caller,
  key: { baseCoinId: string; organizationId: string },
  coinName: string,
): Promise<Html> {
  if (caller.kind === "market_maker") {
    const engaged = (await services.listProjects(caller)).items.some(
      (p) => p.id === key.baseCoinId,
    );
    if (!engaged)
      return html`Its reports of ${coinName} are listed only while it is engaged for the coin, and it is not today.`;
  }
  return html`Its reports, if any, are on <a href="${reportsLink(caller.kind, key)}">the Reports page</a>.`;
}

/**
 * One market maker's markets for a coin, its coverage calendar and each market's charts
 * (issue 14), for every caller kind within its scope: a market maker its own, a project its
 * coins', the operator all. Anything else is a 404.
 */
export const makerPages: DashboardPage = {
  kinds: ["market_maker", "project", "operator"],
  routes(app: FastifyInstance, services: Services) {
    const pages = services.dashboardPages;
    app.get(
      "/coins/:baseCoinId/:organizationId",
      { schema: { hide: true } },
      async (request, reply) => {
        const key = paramsOf(makerParams, request);
        const page = await pages.maker(request.dashboard.caller, key, rangeOf(request.query));
        const rows = page.markets.map(
          (m) =>
            html`<tr><th scope="row"><a href="${marketPath(m)}">${marketName(m)}</a></th>${summaryCells(m)}<td class="num">${m.daysEligible}</td></tr>`,
        );
        const body = html`${pageStyles()}${trail(request, { baseCoinId: key.baseCoinId })}
<p class="lede">${page.maker.organizationName}'s obligation markets for ${page.coin.name}, ${page.dateGte} to ${page.dateLte}. <a href="${calendarPath(key)}">Coverage calendar</a></p>
${rangeForm(makerPath(key), page, RANGE_PRESETS)}
${
  page.markets.length === 0
    ? html`<p class="placeholder">No obligation names a market of ${page.coin.name} for ${page.maker.organizationName} in this range, so there is nothing to score. ${await whereReportsAre(services, request.dashboard.caller, key, page.coin.name)}</p>`
    : html`${scorecardCsvLink({ ...key, dateGte: page.dateGte, dateLte: page.dateLte })}
${tableRegion("Markets")}<table id="markets" class="summary"><caption>Markets, ${page.dateGte} to ${page.dateLte}</caption>
<thead><tr><th scope="col">Market (charts)</th>${summaryHead}<th scope="col" class="num">Days eligible</th></tr></thead>
<tbody>${rows}</tbody>
<tfoot><tr><th scope="row">All ${page.maker.markets} markets</th>${summaryCells(page.maker)}<td class="num">${page.markets.reduce((sum, m) => sum + m.daysEligible, 0)}</td></tr></tfoot>
</table></div>`
}`;
        return sendPage(request, reply, {
          title: `${page.maker.organizationName}: ${page.coin.name}`,
          body,
          current: "",
          section: sectionOf(request),
        });
      },
    );

    app.get(
      "/coins/:baseCoinId/:organizationId/calendar",
      { schema: { hide: true } },
      (request, reply) => sendCalendarPage(request, reply, pages),
    );
    app.get(
      "/coins/:baseCoinId/:organizationId/markets/:exchangeId/:quote/:instrumentType",
      { schema: { hide: true } },
      (request, reply) => sendMarketPage(request, reply, pages),
    );
  },
};
