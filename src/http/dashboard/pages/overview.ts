import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { ValidationError } from "../../../domain/errors.js";
import { problemsOf } from "../../../schemas/problems.js";
import { ELIGIBILITY_REASON_DESCRIPTIONS } from "../../../schemas/report.js";
import { scorecardQuerySchema } from "../../../schemas/scorecards.js";
import type { DayOverview } from "../../../services/dashboard-overview.js";
import type { Services } from "../../../services/index.js";
import { type Html, html } from "../html.js";
import { sendPage } from "../layout.js";
import type { DashboardPage } from "../page.js";
import { makerPath, marketPath } from "../views/market-links.js";
import { tableRegion } from "../views/table-region.js";
import { formQuery } from "./form-query.js";

const overviewQuerySchema = z.object({ date: scorecardQuerySchema.shape.dateLte });

type DailyItem = DayOverview["markets"][number];

/** Whether the day's report is there: a pending day with a report is already submitted. */
function reportCell(item: DailyItem): Html {
  if (item.status === "missing") return html`<span class="status-missing">Missing</span>`;
  if (item.status === "pending" && item.eligibilityStatus === null) {
    return html`<span class="status-pending">Not yet due</span>`;
  }
  return html`<span class="status-submitted">Submitted</span>`;
}

function kpiCell(item: DailyItem): Html {
  if (item.status === "met") return html`<span class="status-met">Met</span>`;
  if (item.status === "missed") {
    return html`<span class="status-missed">Missed: ${item.failedKpis.join(", ")}</span>`;
  }
  if (item.status === "pending" && item.eligibilityStatus !== null) {
    return html`<span class="status-pending">Pending${item.failedKpis.length > 0 ? ` (failing ${item.failedKpis.join(", ")})` : ""}</span>`;
  }
  return html`—`;
}

function marketsTable(overview: DayOverview): Html {
  if (overview.markets.length === 0) {
    return html`<p class="note">No obligation market was due on ${overview.date}.</p>`;
  }
  const rows = overview.markets.map(
    (m) => html`<tr>
<th scope="row"><a href="${makerPath(m)}">${m.baseCoinId}</a></th><td><a href="${marketPath(m)}">${m.exchangeId}</a></td><td>${m.quote}</td><td>${m.instrumentType}</td>
<td>${reportCell(m)}</td>
<td>${m.late ? html`<span class="status-late">Late</span>` : m.eligibilityStatus === null ? "—" : "On time"}</td>
<td>${kpiCell(m)}</td>
<td>${m.eligibilityStatus === null ? "—" : m.eligibilityStatus === "eligible" ? "Eligible" : "Ineligible"}</td>
</tr>`,
  );
  return html`${tableRegion("Obligation markets")}<table>
<caption>Obligation markets on ${overview.date}</caption>
<thead><tr><th scope="col">Base coin</th><th scope="col">Exchange</th><th scope="col">Quote</th><th scope="col">Instrument</th><th scope="col">Report</th><th scope="col">Timeliness</th><th scope="col">KPIs</th><th scope="col">Eligibility</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
}

function summaryCards(overview: DayOverview): Html {
  const count = (test: (m: DailyItem) => boolean) => overview.markets.filter(test).length;
  const cards: [string, number][] = [
    ["Obligation markets", overview.markets.length],
    ["Submitted", count((m) => m.status !== "missing" && m.eligibilityStatus !== null)],
    ["Missing", count((m) => m.status === "missing")],
    ["Late", count((m) => m.late)],
  ];
  return html`<ul class="cards" aria-label="Summary">${cards.map(
    ([label, figure]) => html`<li class="card"><span class="figure">${figure}</span> ${label}</li>`,
  )}</ul>`;
}

function eligibilityTable(overview: DayOverview): Html {
  const { eligibility } = overview;
  const reasons = Object.entries(eligibility.reasons) as [
    keyof typeof ELIGIBILITY_REASON_DESCRIPTIONS,
    number,
  ][];
  return html`${tableRegion("Eligibility")}<table>
<caption>Eligibility of the ${eligibility.total} reports dated ${overview.date}</caption>
<thead><tr><th scope="col">Eligibility</th><th scope="col" class="num">Reports</th><th scope="col">Meaning</th></tr></thead>
<tbody>
<tr><th scope="row">eligible</th><td class="num">${eligibility.eligible}</td><td>Matched with market data</td></tr>
${reasons.map(
  ([reason, n]) =>
    html`<tr><th scope="row">${reason}</th><td class="num">${n}</td><td>${ELIGIBILITY_REASON_DESCRIPTIONS[reason]}</td></tr>`,
)}
</tbody>
</table></div>`;
}

function overviewBody(overview: DayOverview): Html {
  return html`<form method="get" action="/app/overview" class="filters">
<label>Day<input type="date" name="date" value="${overview.date}"></label>
<button type="submit">Show</button>
</form>
<h2>Coverage on ${overview.date}</h2>
${summaryCards(overview)}
${marketsTable(overview)}
<h2>Eligibility</h2>
${eligibilityTable(overview)}`;
}

/** The market maker's day: coverage of each obligation market, eligibility by reason. */
export const overviewPage: DashboardPage = {
  kinds: ["market_maker"],
  nav: [{ path: "/app/overview", label: "Overview", kinds: ["market_maker"] }],
  routes(app: FastifyInstance, services: Services) {
    app.get("/overview", { schema: { hide: true } }, async (request, reply) => {
      const parsed = overviewQuerySchema.safeParse(formQuery(request.query));
      if (!parsed.success) throw new ValidationError(problemsOf(parsed.error));
      const overview = await services.dayOverview(request.dashboard.caller, parsed.data.date);
      return sendPage(request, reply, { title: "Overview", body: overviewBody(overview) });
    });
  },
};
