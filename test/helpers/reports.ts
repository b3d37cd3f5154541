import { expect } from "vitest";
import type { ReportItem } from "../../src/schemas/report.js";
import type { TestApp } from "./app.js";

export type Page = { page: number; totalPages: number; totalCount: number; items: ReportItem[] };

/** Submits records through POST /api/v{version}/report in batches of up to 300. */
export async function submitAll(
  t: TestApp,
  key: string,
  records: Record<string, unknown>[],
  version: 1 | 2 = 2,
): Promise<{ createdCount: number; updatedCount: number }> {
  const total = { createdCount: 0, updatedCount: 0 };
  for (let start = 0; start < records.length; start += 300) {
    const response = await t.request({
      method: "POST",
      url: `/api/v${version}/report`,
      key,
      payload: { data: records.slice(start, start + 300) },
    });
    expect(response.statusCode, response.body).toBe(201);
    const counts = response.json();
    total.createdCount += counts.createdCount;
    total.updatedCount += counts.updatedCount;
  }
  return total;
}

export type Query = Record<string, string | number | undefined>;

/** One GET /api/v1/reports that must succeed; parameters left undefined are not sent. */
export async function listPage(t: TestApp, key: string, query: Query = {}): Promise<Page> {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined) search.set(name, String(value));
  }
  const response = await t.request({ method: "GET", url: `/api/v1/reports?${search}`, key });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

/** Every item of a listing, walking its pages from the first to the last. */
export async function listAll(t: TestApp, key: string, query: Query = {}): Promise<ReportItem[]> {
  const items: ReportItem[] = [];
  for (let page = 1; ; page++) {
    const body = await listPage(t, key, { ...query, page });
    expect(body.page).toBe(page);
    items.push(...body.items);
    if (page >= body.totalPages) {
      // The count the pages announce is the number of items they hold.
      expect(items).toHaveLength(body.totalCount);
      return items;
    }
  }
}

/** What identifies a listed report, as the listing orders it. */
export type ListingKey = {
  date: string;
  exchangeId: string;
  baseCoinId: string;
  quoteKey: string;
  instrumentType: "spot" | "perp";
};

/** Date descending, then exchange, base coin, quote key and instrument type ascending. */
export function compareListingKeys(a: ListingKey, b: ListingKey): number {
  const fields = ["exchangeId", "baseCoinId", "quoteKey", "instrumentType"] as const;
  if (a.date !== b.date) return a.date < b.date ? 1 : -1;
  for (const field of fields) {
    if (a[field] !== b[field]) return a[field] < b[field] ? -1 : 1;
  }
  return 0;
}

/** The listing key of a submitted record that needs no exchange routing. */
export function keyOf(record: Record<string, unknown>): ListingKey {
  return {
    date: String(record.date),
    exchangeId: String(record.exchangeId),
    baseCoinId: String(record.baseCoinId),
    quoteKey: String(record.quoteCoinId ?? String(record.quoteCoinSymbol).toUpperCase()),
    instrumentType: record.instrumentType === "perp" ? "perp" : "spot",
  };
}

/** Consecutive dates from `start`, as YYYY-MM-DD. */
export function dates(start: string, count: number): string[] {
  const first = Date.parse(`${start}T00:00:00Z`);
  return Array.from({ length: count }, (_, i) =>
    new Date(first + i * 86_400_000).toISOString().slice(0, 10),
  );
}
