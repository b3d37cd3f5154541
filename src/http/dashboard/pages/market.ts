import type { FastifyReply, FastifyRequest } from "fastify";
import type { Services } from "../../../services/index.js";
import { type Html, html } from "../html.js";
import { sendPage } from "../layout.js";
import { chartFigure } from "../views/chart.js";
import {
  calendarPath,
  dayCount,
  marketName,
  marketPath,
  rangeForm,
  rangeOf,
} from "../views/market-links.js";
import { chartScripts, pageStyles } from "../views/own-assets.js";
import { qualityFlagsText } from "../views/quality-flags.js";
import { tableRegion } from "../views/table-region.js";
import { marketParams, paramsOf, sectionOf, trail } from "./page-parts.js";

const MARKET_PRESETS = [
  { days: 30, label: "30 days" },
  { days: 90, label: "90 days" },
  { days: 366, label: "1 year" },
  { days: 731, label: "2 years" },
] as const;

/**
 * `GET /app/coins/:baseCoinId/:organizationId/markets/:exchangeId/:quote/:instrumentType`: a
 * market's depth per band and spread over time, thresholds as dashed lines (issue 14).
 */
export async function sendMarketPage(
  request: FastifyRequest,
  reply: FastifyReply,
  pages: Services["dashboardPages"],
) {
  const key = paramsOf(marketParams, request);
  const page = await pages.market(request.dashboard.caller, key, rangeOf(request.query));
  const body = html`${pageStyles()}${chartScripts()}${trail(request, key, page.market.organizationName)}
<p class="lede">${page.market.organizationName}'s reports for ${marketName(key)}, ${page.dateGte} to ${page.dateLte}: ${dayCount(page.reportedDays)} reported (a day without a report is a gap in the lines). Dashed lines are the obligation's thresholds. <a href="${calendarPath(key)}">Coverage calendar</a></p>
${rangeForm(marketPath(key), page, MARKET_PRESETS)}
${page.reportedDays === 0 ? html`<p class="placeholder">No report in this range.${page.dates.length === 0 ? " No obligation names the market on its days either: nothing to draw." : ""}</p>` : ""}
${page.dates.length === 0 ? "" : html`<div class="charts">${page.charts.map((chart) => chartFigure(chart, page.dates))}</div>`}
${flaggedDays(page.flaggedDays)}`;
  return sendPage(request, reply, {
    title: `${page.market.baseCoinId} on ${marketName(key)}`,
    body,
    current: "",
    section: sectionOf(request),
  });
}

/** The days of the range whose report carries quality flags, or a line saying there are none. */
function flaggedDays(days: { date: string; flags: string[] }[]): Html {
  if (days.length === 0)
    return html`<p class="note" id="flagged-days">No reported day in this range carries a quality flag.</p>`;
  return html`${tableRegion("Flagged days")}<table id="flagged-days">
<caption>Flagged days (${days.length}): reports whose numbers fail a quality check</caption>
<thead><tr><th scope="col">Date</th><th scope="col">Quality flags</th></tr></thead>
<tbody>${days.map((d) => html`<tr><th scope="row">${d.date}</th><td>${qualityFlagsText(d.flags)}</td></tr>`)}</tbody>
</table></div>`;
}
