import type { LightMyRequestResponse } from "fastify";
import { sql } from "kysely";
import { expect } from "vitest";
import type { TestApp } from "./app.js";
import { KEYS } from "./fixture.js";

export type Version = 1 | 2;
export type Problem = { path?: string; message: string };

/** POSTs a submission body (an object, or a raw string sent as it is) as Acme. */
export function submit(
  t: TestApp,
  version: Version,
  body: unknown,
  options: { headers?: Record<string, string>; key?: string } = {},
): Promise<LightMyRequestResponse> {
  return t.request({
    method: "POST",
    url: `/api/v${version}/report`,
    key: options.key ?? KEYS.acme,
    headers: { "content-type": "application/json", ...options.headers },
    payload: typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
}

/** Submits records and expects them accepted; returns the counts. */
export async function submitOk(
  t: TestApp,
  version: Version,
  records: unknown[],
  headers?: Record<string, string>,
): Promise<{ createdCount: number; updatedCount: number }> {
  const response = await submit(t, version, { data: records }, { headers });
  expect(response.json(), response.body).not.toHaveProperty("error");
  expect(response.statusCode).toBe(201);
  return response.json();
}

/** The problems of a 400 response, after checking the body is exactly the specified shape. */
export function problemsOf(response: LightMyRequestResponse): Problem[] {
  expect(response.statusCode, response.body).toBe(400);
  const body = response.json();
  expect(Object.keys(body).sort()).toEqual(["error", "message", "statusCode"]);
  expect(body.statusCode).toBe(400);
  expect(body.error).toBe("Bad Request");
  expect(Array.isArray(body.message)).toBe(true);
  return body.message;
}

/** One page of the listing (at most 500 items) as Acme. */
export async function listReports(
  t: TestApp,
  query: Record<string, string> = {},
): Promise<Record<string, unknown>[]> {
  const response = await t.request({
    method: "GET",
    url: "/api/v1/reports",
    key: KEYS.acme,
    query: { pageSize: "500", ...query },
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().items;
}

/** The listed report of one date (and optionally exchange), which must be unique. */
export async function listedOn(
  t: TestApp,
  date: string,
  filter: { exchangeId?: string; baseCoinId?: string } = {},
): Promise<Record<string, unknown>> {
  const items = await listReports(t, { dateGte: date, dateLte: date, ...filter });
  expect(items).toHaveLength(1);
  return items[0] as Record<string, unknown>;
}

/** Row counts of the report tables, straight from the database. */
export async function rowCounts(t: TestApp): Promise<{ reports: number; versions: number }> {
  const result = await sql<{ reports: number; versions: number }>`
    select (select count(*) from reports)::int as reports,
      (select count(*) from report_versions)::int as versions`.execute(t.database.db);
  const row = result.rows[0];
  if (row === undefined) throw new Error("no row");
  return row;
}

/** `start` plus `days`, as YYYY-MM-DD. */
export function dayAfter(start: string, days: number): string {
  const d = new Date(`${start}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}
