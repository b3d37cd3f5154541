import type { FastifyReply, FastifyRequest } from "fastify";
import { CALENDAR_MARKS, type CalendarMarket } from "../../../services/dashboard-calendar.js";
import type { Services } from "../../../services/index.js";
import { type Html, html } from "../html.js";
import { sendPage } from "../layout.js";
import { calendarGrid, calendarLegend } from "../views/calendar-grid.js";
import { calendarPath, marketName, marketPath, rangeForm, rangeOf } from "../views/market-links.js";
import { pageStyles } from "../views/own-assets.js";
import { tableRegion } from "../views/table-region.js";
import { makerParams, paramsOf, RANGE_PRESETS, sectionOf, trail } from "./page-parts.js";
import { scorecardCsvLink } from "./scorecard-downloads.js";

type Key = { organizationId: string; baseCoinId: string };

/** One market's calendar and its days counted by mark (each cell also says its day in words). */
function marketSection(
  key: Key,
  market: CalendarMarket,
  i: number,
  range: { dateGte: string; dateLte: string },
): Html {
  const name = marketName(market);
  return html`<section class="market-calendar" id="market-${i + 1}" aria-labelledby="market-${i + 1}-title">
<h2 id="market-${i + 1}-title"><a href="${marketPath({ ...key, ...market })}">${name}</a></h2>
${calendarGrid(market, range)}
${tableRegion(`Days by mark, ${name}`)}<table class="counts"><caption>Days by mark, ${name}</caption>
<thead><tr>${CALENDAR_MARKS.map((mark) => html`<th scope="col" class="num">${mark}</th>`)}</tr></thead>
<tbody><tr>${CALENDAR_MARKS.map((mark) => html`<td class="num">${market.counts[mark]}</td>`)}</tr></tbody></table></div>
</section>`;
}

/** `GET /app/coins/:baseCoinId/:organizationId/calendar`: the coverage calendar (issue 14). */
export async function sendCalendarPage(
  request: FastifyRequest,
  reply: FastifyReply,
  pages: Services["dashboardPages"],
) {
  const key = paramsOf(makerParams, request);
  const page = await pages.calendar(request.dashboard.caller, key, rangeOf(request.query));
  const sections = page.markets.map((market, i) => marketSection(key, market, i, page));
  const body = html`${pageStyles()}${trail(request, key, page.organizationName)}
<p class="lede">One cell a day for each obligation market, ${page.dateGte} to ${page.dateLte}: day D is due by D+1 at the deadline (UTC).</p>
${rangeForm(calendarPath(key), page, RANGE_PRESETS)}
${calendarLegend}
${page.markets.length === 0 ? html`<p class="placeholder">No obligation market in this range.</p>` : html`${scorecardCsvLink({ ...key, dateGte: page.dateGte, dateLte: page.dateLte }, true)}${sections}`}`;
  return sendPage(request, reply, {
    title: `Coverage calendar: ${page.organizationName}, ${page.baseCoinId}`,
    body,
    current: "",
    section: sectionOf(request),
  });
}
