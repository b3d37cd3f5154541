import type { z } from "zod";
import type { ListQuery, reportPageSchema } from "../../../schemas/list-query.js";
import { ELIGIBILITY_REASON_DESCRIPTIONS } from "../../../schemas/report.js";
import { type Html, html } from "../html.js";
import { groupedFigure } from "../views/market-links.js";
import { qualityFlagsText } from "../views/quality-flags.js";
import { tableRegion } from "../views/table-region.js";
import { queryString } from "./form-query.js";
import { emptyNote, pager, pageSizeOptions } from "./list-parts.js";

export type ReportPage = z.infer<typeof reportPageSchema>;
type Item = ReportPage["items"][number];

export type FilterChoices = {
  coins: { id: string; label: string }[];
  exchanges: { id: string; label: string }[];
  /** Market makers to filter by (project and operator keys); empty for a market maker. */
  organizations: { id: string; label: string }[];
};

export const DASHBOARD_PAGE_SIZE = 50;

function select(
  name: string,
  label: string,
  choices: { id: string; label: string }[],
  current: string | undefined,
): Html {
  return html`<label>${label}<select name="${name}">
<option value="">All</option>
${choices.map((c) => html`<option value="${c.id}"${c.id === current ? html` selected` : ""}>${c.label}</option>`)}
</select></label>`;
}

function filterForm(query: ListQuery, choices: FilterChoices): Html {
  const pageSize = query.pageSize ?? DASHBOARD_PAGE_SIZE;
  return html`<form method="get" action="/app/reports" class="filters" aria-label="Filters">
${choices.organizations.length > 0 ? select("organizationId", "Market maker", choices.organizations, query.organizationId) : ""}
${select("baseCoinId", "Base coin", choices.coins, query.baseCoinId)}
${select("exchangeId", "Exchange", choices.exchanges, query.exchangeId)}
<label>From<input type="date" name="dateGte" value="${query.dateGte ?? ""}"></label>
<label>To<input type="date" name="dateLte" value="${query.dateLte ?? ""}"></label>
<label>Per page<select name="pageSize">${pageSizeOptions(pageSize)}</select></label>
${query.include === "quality" ? html`<input type="hidden" name="include" value="quality">` : ""}
<button type="submit">Apply</button>
<a href="/app/reports">Clear</a>
</form>`;
}

/** "eligible", or the reason's code with its words on hover (all of them under the table). */
function eligibilityText(reason: Item["eligibilityReason"]): Html {
  if (reason === null || reason === undefined) return html`eligible`;
  return html`<abbr title="${ELIGIBILITY_REASON_DESCRIPTIONS[reason]}">${reason}</abbr>`;
}

/** The ineligibility reasons of the page's reports, each in words, once. */
function eligibilityLegend(items: readonly Item[]): Html {
  const reasons = [...new Set(items.flatMap((i) => i.eligibilityReason ?? []))];
  if (reasons.length === 0) return html``;
  return html`<dl class="note">${reasons.map((r) => html`<dt>${r}</dt><dd>${ELIGIBILITY_REASON_DESCRIPTIONS[r]}</dd>`)}</dl>`;
}

function row(item: Item, withOrganization: boolean): Html {
  return html`<tr>
${withOrganization ? html`<td>${item.organizationName ?? ""}</td>` : ""}
<td>${item.date}</td><td>${item.exchangeName}</td><td>${item.baseCoinSymbol}</td>
<td>${item.quoteCoinId ?? item.quoteCoinSymbol ?? ""}</td>
<td class="num">${groupedFigure(item.bidDepth200)}</td><td class="num">${groupedFigure(item.askDepth200)}</td>
<td class="num">${groupedFigure(item.bidAskSpread)}</td><td class="num">${groupedFigure(item.topOfBookPercentage)}</td>
<td>${eligibilityText(item.eligibilityReason)}</td>
<td class="flags">${qualityFlagsText(item.qualityFlags)}</td>
</tr>`;
}

function table(page: ReportPage, withOrganization: boolean): Html {
  const head = [...(withOrganization ? ["Market maker"] : []), "Date", "Exchange", "Base", "Quote"];
  const numeric = ["Bid depth ±2% (USD)", "Ask depth ±2% (USD)", "Spread %", "Top of book %"];
  return html`${tableRegion("Reports")}<table id="reports">
<caption>Reports (${page.totalCount} matching)</caption>
<thead><tr>${head.map((h) => html`<th scope="col">${h}</th>`)}${numeric.map((h) => html`<th scope="col" class="num">${h}</th>`)}<th scope="col">Eligibility</th><th scope="col">Quality flags</th></tr></thead>
<tbody>${page.items.map((item) => row(item, withOrganization))}</tbody>
</table></div>
${eligibilityLegend(page.items)}`;
}

/**
 * The reports page: filters, the CSV link (every matching report), the table, the pager. The
 * link has no `download` attribute: the CSV's Content-Disposition saves it as reports.csv,
 * and any other answer (the sign-in page of an ended session, the page saying every export
 * slot is taken) is shown as a page instead of being saved as a file.
 */
export function reportsBody(
  query: ListQuery,
  page: ReportPage,
  choices: FilterChoices,
  withOrganization: boolean,
): Html {
  const { page: _page, pageSize: _size, ...filters } = query;
  return html`${filterForm(query, choices)}
<p><a class="button" href="/app/reports.csv${queryString(filters)}">Download CSV</a> <span class="note">every report matching the filters (${page.totalCount}), as the API's export</span></p>
${page.items.length === 0 ? html`<p class="note">${emptyNote("report", query, page)}</p>` : table(page, withOrganization)}
${pager("/app/reports", { ...query, pageSize: query.pageSize ?? DASHBOARD_PAGE_SIZE }, page)}`;
}
