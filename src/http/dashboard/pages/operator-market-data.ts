import type { FastifyInstance } from "fastify";
import type { Services } from "../../../services/index.js";
import type { ExchangeFreshness } from "../../../services/operator-views.js";
import { type Html, html } from "../html.js";
import { sendPage } from "../layout.js";
import type { DashboardPage } from "../page.js";
import { tableRegion } from "../views/table-region.js";
import { utcMinute } from "./operator-keys.js";

const OPERATOR = ["operator"] as const;

type Freshness = Awaited<ReturnType<Services["operator"]["marketDataFreshness"]>>;

function dataCell(e: ExchangeFreshness): Html {
  if (!e.marketData) return html`<span class="status-missing">No (not collected)</span>`;
  if (e.markets === 0) return html`<span class="status-missing">No market yet</span>`;
  return html`<span class="status-met">Yes</span>`;
}

function freshnessBody(f: Freshness): Html {
  const without = f.exchanges.filter((e) => !e.marketData || e.markets === 0);
  return html`<dl class="cards">
<div class="card"><dt>Last market-data sync</dt><dd class="figure">${utcMinute(f.syncedAt) ?? "never"}</dd></div>
<div class="card"><dt>Reference data last changed</dt><dd class="figure">${utcMinute(f.changedAt) ?? "not recorded"}</dd></div>
<div class="card"><dt>Reference data version</dt><dd class="figure">${f.version}</dd></div>
<div class="card"><dt>Exchanges without data</dt><dd class="figure">${without.length} of ${f.exchanges.length}</dd></div>
</dl>
${tableRegion("Exchanges")}<table>
<caption>Exchanges</caption>
<thead><tr><th scope="col">Exchange</th><th scope="col">Name</th><th scope="col">Market data</th><th scope="col" class="num">Markets</th><th scope="col">Newest market collected since</th></tr></thead>
<tbody>${f.exchanges.map(
    (e) =>
      html`<tr><th scope="row">${e.id}</th><td>${e.name}</td><td>${dataCell(e)}</td><td class="num">${e.markets}</td><td>${e.latestCollectedSince ?? "—"}</td></tr>`,
  )}</tbody>
</table></div>`;
}

/** When market data last synced and changed, and which exchanges have none. */
export const operatorMarketDataPage: DashboardPage = {
  kinds: OPERATOR,
  nav: [{ path: "/app/market-data", label: "Market data", kinds: OPERATOR }],
  routes(app: FastifyInstance, services: Services) {
    app.get("/market-data", { schema: { hide: true } }, async (request, reply) => {
      const freshness = await services.operator.marketDataFreshness(request.dashboard.caller);
      return sendPage(request, reply, {
        title: "Market-data freshness",
        body: freshnessBody(freshness),
      });
    });
  },
};
