/**
 * `trading-reports/client`: a typed client of the reporting API, for market makers' own
 * programs and the `submit` and `export` commands. The types are generated from the OpenAPI
 * document (`npm run generate:client`), so a changed route schema changes them; the calls are
 * openapi-fetch's, by path:
 *
 *   const client = createReportsClient({ url: "https://reports.example.com", key });
 *   const { data, error, response } = await client.POST("/api/v2/report", {
 *     params: { header: { "x-dry-run": "true" } },
 *     body: { data: records },
 *   });
 *
 * Batching, retries and progress are the caller's (see examples/submit.ts and the CLI).
 */
import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./api.generated.js";

export type { paths } from "./api.generated.js";

/**
 * Answers are typed as JSON: the listing also speaks CSV (`Accept: text/csv`), which a caller
 * reads as a stream (`parseAs: "stream"`) or text, not as a typed page.
 */
export type ReportsClient = Client<paths, "application/json">;

export type ReportsClientOptions = {
  /** Base URL of the service, e.g. `https://reports.example.com`. */
  url: string;
  /** The organization's API key, sent as `Authorization`. */
  key: string;
  /** Another fetch (a proxy agent, a test double); the global fetch by default. */
  fetch?: (request: Request) => Promise<Response>;
};

export function createReportsClient(options: ReportsClientOptions): ReportsClient {
  return createClient<paths, "application/json">({
    baseUrl: options.url.replace(/\/+$/, ""),
    headers: { Authorization: options.key },
    fetch: options.fetch,
  });
}

type Json<T> = T extends { content: { "application/json": infer Body } } ? Body : never;
type Post<P extends keyof paths> = paths[P]["post"];
type Get<P extends keyof paths> = paths[P]["get"];

/** A record of `POST /api/v2/report` (every metric required). */
export type V2Record = Json<Post<"/api/v2/report">["requestBody"]>["data"][number];
/** A record of `POST /api/v1/report` (metrics optional). */
export type V1Record = Json<Post<"/api/v1/report">["requestBody"]>["data"][number];
/** What a submission answers: `{ createdCount, updatedCount }`. */
export type SubmissionResult = Json<Post<"/api/v2/report">["responses"][201]>;
/** A 400: every problem of the batch, `path` naming the field (`data.3.bidDepth50`). */
export type BadRequest = Json<Post<"/api/v2/report">["responses"][400]>;
/** The filters and paging of `GET /api/v1/reports`. */
export type ReportQuery = NonNullable<Get<"/api/v1/reports">["parameters"]["query"]>;
/** A page of `GET /api/v1/reports`. */
export type ReportPage = Json<Get<"/api/v1/reports">["responses"][200]>;
/** One listed report, with its eligibility. */
export type Report = ReportPage["items"][number];
