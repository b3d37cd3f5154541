import type { FastifyInstance } from "fastify";
import { scorecardQuerySchema } from "../../../schemas/scorecards.js";
import type { Services } from "../../../services/index.js";
import { sendDailyScorecardsCsv, sendScorecardsCsv } from "../../scorecard-csv-answer.js";
import { type Html, html } from "../html.js";
import type { DashboardPage } from "../page.js";
import { linkQuery, parseFormQuery, queryString } from "./form-query.js";

const SUMMARY_PATH = "/app/scorecards.csv";
const DAILY_PATH = "/app/scorecards/daily.csv";

/**
 * The scorecards of a dashboard page as the API's CSV (`Accept: text/csv` on
 * /api/v1/scorecards and /daily), in the signed-in caller's scope: the same file a script
 * would fetch with the organization's key.
 */
export const scorecardDownloads: DashboardPage = {
  kinds: ["market_maker", "project", "operator"],
  routes(app: FastifyInstance, services: Services) {
    app.get("/scorecards.csv", { schema: { hide: true } }, async (request, reply) => {
      const result = await services.getScorecards(
        request.dashboard.caller,
        parseFormQuery(scorecardQuerySchema, request.query, linkQuery),
      );
      return sendScorecardsCsv(reply, result);
    });
    app.get("/scorecards/daily.csv", { schema: { hide: true } }, async (request, reply) => {
      const query = parseFormQuery(scorecardQuerySchema, request.query, linkQuery);
      const result = await services.getDailyScorecards(request.dashboard.caller, query);
      return sendDailyScorecardsCsv(reply, result);
    });
  },
};

type Shown = { baseCoinId: string; organizationId?: string; dateGte: string; dateLte: string };

/**
 * The link to a page's scorecards as CSV, one row per market (or per market and day). No
 * `download` attribute, as on the reports page: the answer's Content-Disposition saves the
 * file, and an error page (a session that ended) is shown rather than saved.
 */
export function scorecardCsvLink(shown: Shown, daily = false): Html {
  const path = daily ? DAILY_PATH : SUMMARY_PATH;
  const rows = daily ? "one row per market and day" : "one row per market";
  return html`<p><a class="button" href="${path}${queryString(shown)}">Download CSV</a> <span class="note">these scorecards, ${rows}, as the API's CSV</span></p>`;
}
