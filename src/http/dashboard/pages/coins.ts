import type { FastifyInstance } from "fastify";
import type { MakerSummary } from "../../../services/dashboard-coins.js";
import type { Services } from "../../../services/index.js";
import { html } from "../html.js";
import { sendPage } from "../layout.js";
import type { DashboardPage } from "../page.js";
import {
  coinPath,
  makerPath,
  medianFigure,
  percent,
  rangeForm,
  rangeOf,
} from "../views/market-links.js";
import { pageStyles } from "../views/own-assets.js";
import { tableRegion } from "../views/table-region.js";
import { coinParams, paramsOf, RANGE_PRESETS } from "./page-parts.js";
import { scorecardCsvLink } from "./scorecard-downloads.js";

/** The cells a market maker's summary shows, after its name (the coin and drill-down tables). */
export const summaryHead = html`<th scope="col" class="num">Compliance</th>
<th scope="col" class="num">Days due</th><th scope="col" class="num">Days met</th>
<th scope="col" class="num">Days missing</th><th scope="col" class="num">Days late</th>
<th scope="col" class="num">Days flagged</th>
<th scope="col" class="num">Median bid depth ±2 % (USD)</th>
<th scope="col" class="num">Median ask depth ±2 % (USD)</th>
<th scope="col" class="num">Median spread (%)</th>`;

export const summaryCells = (
  s: Omit<MakerSummary, "organizationId" | "organizationName" | "markets">,
) =>
  html`<td class="num">${percent(s.compliance)}</td><td class="num">${s.daysDue}</td>
<td class="num">${s.daysMet}</td><td class="num">${s.daysMissing}</td><td class="num">${s.daysLate}</td>
<td class="num">${s.daysFlagged}</td>
<td class="num">${medianFigure(s.bidDepth200)}</td><td class="num">${medianFigure(s.askDepth200)}</td>
<td class="num">${medianFigure(s.bidAskSpread)}</td>`;

/**
 * A token project's coins and, per coin, its market makers side by side (issue 14); the
 * operator sees every coin with obligations. A coin outside a project's scope is a 404.
 */
export const coinPages: DashboardPage = {
  kinds: ["project", "operator"],
  nav: [{ path: "/app/coins", label: "Coins", kinds: ["project", "operator"] }],
  routes(app: FastifyInstance, services: Services) {
    const pages = services.dashboardPages;
    app.get("/coins", { schema: { hide: true } }, async (request, reply) => {
      const coins = await pages.coins(request.dashboard.caller);
      const rows = coins.map(
        (c) =>
          html`<tr><th scope="row"><a href="${coinPath(c.id)}">${c.name}</a></th><td>${c.symbol}</td><td>${c.id}</td></tr>`,
      );
      const body =
        coins.length === 0
          ? html`<p class="placeholder">No coin has obligations yet.</p>`
          : html`<p class="lede">Choose a coin to compare its market makers.</p>
${tableRegion("Coins")}<table><caption>Coins</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Symbol</th><th scope="col">Id</th></tr></thead>
<tbody>${rows}</tbody></table></div>`;
      return sendPage(request, reply, { title: "Coins", body });
    });

    app.get<{ Params: { baseCoinId: string } }>(
      "/coins/:baseCoinId",
      { schema: { hide: true } },
      async (request, reply) => {
        const { baseCoinId } = paramsOf(coinParams, request);
        const page = await pages.coin(request.dashboard.caller, baseCoinId, rangeOf(request.query));
        const range = { dateGte: page.dateGte, dateLte: page.dateLte };
        const rows = page.makers.map(
          (m) =>
            html`<tr><th scope="row"><a href="${makerPath({ organizationId: m.organizationId, baseCoinId })}">${m.organizationName}</a></th>
<td class="num">${m.markets}</td>${summaryCells(m)}</tr>`,
        );
        const body = html`${pageStyles()}<p class="lede">Each market maker's obligation markets for ${page.coin.name}, ${page.dateGte} to ${page.dateLte}: compliance is the share of due market-days whose report met every KPI; medians are over the reports of those days.</p>
${rangeForm(coinPath(baseCoinId), range, RANGE_PRESETS)}
${
  page.makers.length === 0
    ? html`<p class="placeholder">No market maker owes anything for this coin in this range.</p>`
    : html`${scorecardCsvLink({ baseCoinId, ...range })}
${tableRegion("Market makers")}<table id="makers" class="summary"><caption>Market makers, ${page.dateGte} to ${page.dateLte}</caption>
<thead><tr><th scope="col">Market maker</th><th scope="col" class="num">Markets</th>${summaryHead}</tr></thead>
<tbody>${rows}</tbody></table></div>`
}`;
        return sendPage(request, reply, {
          title: `${page.coin.name} (${page.coin.symbol}): market makers`,
          body,
          current: "/app/coins",
        });
      },
    );
  },
};
