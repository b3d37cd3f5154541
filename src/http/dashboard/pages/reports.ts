import type { FastifyInstance, FastifyRequest } from "fastify";
import type { HttpConfig } from "../../../config.js";
import type { Caller } from "../../../domain/caller.js";
import { readScope } from "../../../domain/caller.js";
import { ValidationError } from "../../../domain/errors.js";
import { includeOf, type ListQuery, listQuerySchema } from "../../../schemas/list-query.js";
import { problemsOf } from "../../../schemas/problems.js";
import type { Services } from "../../../services/index.js";
import { limitExportsPerKey } from "../../abuse/exports.js";
import { reportCsvStream } from "../../report-csv.js";
import { sendErrorPage } from "../error-page.js";
import { sendPage } from "../layout.js";
import type { DashboardPage, SharedLimits } from "../page.js";
import { formQuery } from "./form-query.js";
import {
  DASHBOARD_PAGE_SIZE,
  type FilterChoices,
  type ReportPage,
  reportsBody,
} from "./reports-view.js";

/**
 * The listing query of a form, checked by the API's own schema (same 400 problems); `include`
 * is read as the API reads it (any value but `quality` ignored).
 */
function listQueryOf(request: FastifyRequest): ListQuery {
  const { include: _, ...form } = formQuery(request.query);
  const include = includeOf((request.query as Record<string, unknown> | undefined)?.include);
  const parsed = listQuerySchema.safeParse(include === undefined ? form : { ...form, include });
  if (!parsed.success) throw new ValidationError(problemsOf(parsed.error));
  return parsed.data;
}

/** The coins (id -> label) and market makers (id -> name) whose reports `caller` reads. */
async function readChoices(services: Services, caller: Caller) {
  const coins = new Map<string, string>();
  const organizations = new Map<string, string>();
  if (caller.kind === "market_maker") {
    for (const p of (await services.listProjects(caller)).items)
      coins.set(p.id, `${p.symbol} (${p.name})`);
    return { coins, organizations };
  }
  const [engaged, ref] = await Promise.all([
    services.dashboardPages.readableEngagements(caller),
    services.referenceData.current(),
  ]);
  for (const e of engaged) {
    const coin = ref.coins.get(e.baseCoinId);
    coins.set(e.baseCoinId, coin === undefined ? e.baseCoinId : `${coin.symbol} (${coin.name})`);
    organizations.set(e.organizationId, e.organizationName);
  }
  return { coins, organizations };
}

/**
 * The filters' choices: the coins and organizations whose reports the caller reads (a market
 * maker: its active engagements' coins; a project or operator: every engagement in scope,
 * ended ones included), and the exchanges.
 */
async function choicesFor(services: Services, caller: Caller): Promise<FilterChoices> {
  const [{ coins, organizations }, exchanges] = await Promise.all([
    readChoices(services, caller),
    services.listExchanges(),
  ]);
  const sorted = (m: Map<string, string>) =>
    [...m].map(([id, label]) => ({ id, label })).sort((a, b) => a.label.localeCompare(b.label));
  return {
    coins: sorted(coins),
    exchanges: exchanges.items.map((e) => ({ id: e.id, label: e.name })),
    organizations: sorted(organizations),
  };
}

/**
 * The reports table (every caller kind: a project or operator key reads across market
 * makers, as on the API), with the listing's filters and paging, and the CSV export of every
 * matching report. Both call the listing services exactly as GET /api/v1/reports does.
 */
export const reportsPage: DashboardPage = {
  kinds: ["market_maker", "project", "operator"],
  nav: [{ path: "/app/reports", label: "Reports", kinds: ["market_maker", "project", "operator"] }],
  routes(app: FastifyInstance, services: Services, _http: HttpConfig, limits: SharedLimits) {
    // The API's slots; a refusal is a page that says why (the download would fail silently).
    limitExportsPerKey(
      app,
      limits.exports,
      (r) => r.routeOptions.url === "/app/reports.csv",
      (request, reply, message) => sendErrorPage(request, reply, 429, [message]),
    );
    app.get("/reports", { schema: { hide: true } }, async (request, reply) => {
      const { caller } = request.dashboard;
      const query = listQueryOf(request);
      // The table shows each report's quality flags, whatever the form asked.
      const paged = {
        ...query,
        include: "quality" as const,
        pageSize: query.pageSize ?? DASHBOARD_PAGE_SIZE,
      };
      const [json, choices] = await Promise.all([
        services.listReportsJson(caller, paged),
        choicesFor(services, caller),
      ]);
      const page = JSON.parse(json) as ReportPage;
      const across = readScope(caller).kind !== "organization";
      return sendPage(request, reply, {
        title: "Reports",
        body: reportsBody(query, page, choices, across),
      });
    });
    app.get("/reports.csv", { schema: { hide: true } }, async (request, reply) => {
      const { caller } = request.dashboard;
      const query = listQueryOf(request);
      const chunks = services.exportReports(caller, query);
      const first = await services.guard(() => chunks.next());
      const across = readScope(caller).kind !== "organization";
      return reply
        .header("content-type", "text/csv; charset=utf-8")
        .header("content-disposition", 'attachment; filename="reports.csv"')
        .send(reportCsvStream(first, chunks, across, query.include === "quality"));
    });
  },
};
