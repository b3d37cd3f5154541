import type { DashboardPage } from "../page.js";
import { coinPages } from "./coins.js";
import { makerPages, ownMarketsPage } from "./markets.js";
import { operatorKeysPage } from "./operator-keys.js";
import { operatorMarketDataPage } from "./operator-market-data.js";
import { operatorOrganizationsPage } from "./operator-organizations.js";
import { overviewPage } from "./overview.js";
import { reportsPage } from "./reports.js";
import { scorecardDownloads } from "./scorecard-downloads.js";
import { submissionsPage } from "./submissions.js";

/**
 * Every page of the dashboard, in navigation order (each kind's first entry is its home).
 * Add a page: one line here, its module beside this one.
 */
export const DASHBOARD_PAGES: readonly DashboardPage[] = [
  overviewPage,
  operatorOrganizationsPage,
  operatorKeysPage,
  operatorMarketDataPage,
  coinPages,
  reportsPage,
  ownMarketsPage,
  submissionsPage,
  makerPages,
  scorecardDownloads,
];
