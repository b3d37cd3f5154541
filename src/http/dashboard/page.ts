import type { FastifyInstance } from "fastify";
import type { HttpConfig } from "../../config.js";
import type { Caller, OrganizationKind } from "../../domain/caller.js";
import type { Services } from "../../services/index.js";
import type { ExportSlots } from "../abuse/exports.js";
import type { RateCounter } from "../abuse/rate-counters.js";
import type { AuthFailureBudget } from "../abuse/rate-limits.js";
import type { Html } from "./html.js";

declare module "fastify" {
  interface FastifyRequest {
    /** Set in the dashboard's signed-in scope only. */
    dashboard: DashboardRequestState;
  }
}

/** A link of the navigation, shown to the caller kinds listed. */
export type NavEntry = { path: string; label: string; kinds: readonly OrganizationKind[] };

/** What the signed-in scope knows of a request (set before any page handler runs). */
export type DashboardRequestState = {
  caller: Caller;
  csrfToken: string;
  /** The organization's display name. */
  organizationName: string;
  nav: readonly NavEntry[];
};

/**
 * One page (or group of pages) of the dashboard. `routes` registers its GET routes (paths
 * under `/app/`) in a scope of its own, reached only by the `kinds` listed (another kind gets
 * 403) and only when signed in: `request.dashboard` holds the caller and the CSRF token.
 * Render with `sendPage` (layout.ts). Add a page by listing it in `pages/index.ts`.
 */
export type DashboardPage = {
  kinds: readonly OrganizationKind[];
  nav?: readonly NavEntry[];
  routes: (
    app: FastifyInstance,
    services: Services,
    http: HttpConfig,
    limits: SharedLimits,
  ) => void | Promise<void>;
};

/** The limits the dashboard shares with the API (app.ts): one budget for both doors. */
export type SharedLimits = {
  /** Failed authentications (API keys, sign-ins) per client address. */
  authFailures: AuthFailureBudget;
  /** Requests per stored API key (the API's and its sessions' pages). */
  requestsPerKey: RateCounter;
  /** CSV exports streaming at once per API key. */
  exports: ExportSlots;
};

export type PageContent = {
  title: string;
  body: Html;
  /** The path of the navigation entry to mark as current (default: the request's path). */
  current?: string;
  /** The navigation entry a page below it belongs to (marked `aria-current="true"`). */
  section?: string;
  status?: number;
};
