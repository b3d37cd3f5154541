import { qualityFlagsOf } from "../domain/quality.js";
import type { ListQuery } from "../schemas/list-query.js";
import type { ReportCsvItem } from "../schemas/report.js";
import type { PageItem } from "../store/report-listing.js";

/**
 * A page item's JSON text, with `qualityFlags` last when the query asks for them
 * (`include=quality`); without it, the item exactly as the listing has always written it.
 * The item text is a JSON object, so the flags go before its closing brace.
 */
export function listedItemJson(item: PageItem, query: ListQuery): string {
  if (query.include !== "quality") return item.item;
  const flags = JSON.stringify(qualityFlagsOf(item.qualityFlags));
  return `${item.item.slice(0, -1)},"qualityFlags":${flags}}`;
}

/** A page item as a CSV row's fields; with include=quality, its flags separated by spaces. */
export function csvItemOf<T extends ReportCsvItem>(
  { item, instrumentType, qualityFlags }: PageItem,
  query: ListQuery,
): T {
  const fields = { ...JSON.parse(item), instrumentType };
  if (query.include === "quality") fields.qualityFlags = qualityFlagsOf(qualityFlags).join(" ");
  return fields;
}
