import type { FastifyInstance } from "fastify";
import type { Services } from "../../../services/index.js";
import { type Html, html } from "../html.js";
import { sendPage } from "../layout.js";
import type { DashboardPage } from "../page.js";
import { tableRegion } from "../views/table-region.js";

const OPERATOR = ["operator"] as const;

const KIND_NAMES: Record<string, string> = {
  market_maker: "market maker",
  project: "token project",
  operator: "operator",
};

type Organizations = Awaited<ReturnType<Services["operator"]["organizations"]>>;
type Engagements = Awaited<ReturnType<Services["operator"]["engagements"]>>;
type Obligations = Awaited<ReturnType<Services["listObligations"]>>["items"];

function organizationsTable(organizations: Organizations): Html {
  return html`${tableRegion("Organizations")}<table>
<caption>Organizations (${organizations.length})</caption>
<thead><tr><th scope="col">Id</th><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Coins</th></tr></thead>
<tbody>${organizations.map(
    (o) =>
      html`<tr><th scope="row">${o.id}</th><td>${o.name}</td><td>${KIND_NAMES[o.kind] ?? o.kind}</td><td>${o.coins.length === 0 ? "—" : o.coins.join(", ")}</td></tr>`,
  )}</tbody>
</table></div>`;
}

function engagementsTable(engagements: Engagements): Html {
  return html`${tableRegion("Engagements")}<table>
<caption>Engagements (${engagements.length})</caption>
<thead><tr><th scope="col">Organization</th><th scope="col">Base coin</th><th scope="col">Type</th><th scope="col">Since</th><th scope="col">Until</th></tr></thead>
<tbody>${engagements.map(
    (e) =>
      html`<tr><th scope="row">${e.organizationName}</th><td>${e.baseCoinId}</td><td>${e.type}</td><td>${e.since}</td><td>${e.until ?? "open-ended"}</td></tr>`,
  )}</tbody>
</table></div>`;
}

function kpiText(kpis: Obligations[number]["kpis"]): string {
  const entries = Object.entries(kpis);
  return entries.length === 0 ? "—" : entries.map(([k, v]) => `${k} ${v}`).join(", ");
}

function obligationsTable(obligations: Obligations): Html {
  return html`${tableRegion("Obligation periods")}<table>
<caption>Obligation periods (${obligations.length})</caption>
<thead><tr><th scope="col">Market maker</th><th scope="col">Base coin</th><th scope="col">Since</th><th scope="col">Until</th><th scope="col">Markets</th><th scope="col">KPIs</th></tr></thead>
<tbody>${obligations.map(
    (o) =>
      html`<tr><th scope="row">${o.organizationName}</th><td>${o.baseCoinId}</td><td>${o.since}</td><td>${o.until ?? "open-ended"}</td>
<td>${o.markets.map((m) => `${m.exchangeId} ${m.quote} ${m.instrumentType}`).join("; ")}</td><td>${kpiText(o.kpis)}</td></tr>`,
  )}</tbody>
</table></div>`;
}

/** The operator's organizations (kind, coins), and the engagements and obligations. */
export const operatorOrganizationsPage: DashboardPage = {
  kinds: OPERATOR,
  nav: [
    { path: "/app/organizations", label: "Organizations", kinds: OPERATOR },
    { path: "/app/engagements", label: "Engagements", kinds: OPERATOR },
  ],
  routes(app: FastifyInstance, services: Services) {
    app.get("/organizations", { schema: { hide: true } }, async (request, reply) => {
      const organizations = await services.operator.organizations(request.dashboard.caller);
      return sendPage(request, reply, {
        title: "Organizations",
        body: organizationsTable(organizations),
      });
    });
    app.get("/engagements", { schema: { hide: true } }, async (request, reply) => {
      const { caller } = request.dashboard;
      const [engagements, obligations] = await Promise.all([
        services.operator.engagements(caller),
        services.listObligations(caller, {}),
      ]);
      return sendPage(request, reply, {
        title: "Engagements and obligations",
        body: html`${engagementsTable(engagements)}
<h2>Obligations</h2>
${obligationsTable(obligations.items)}`,
      });
    });
  },
};
