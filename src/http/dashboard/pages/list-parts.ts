import { type Html, html } from "../html.js";
import { queryString } from "./form-query.js";

/** What the reports and submissions pages share: a page of a filtered, paged list. */
type ListPage = { page: number; totalPages: number; totalCount: number };
type ListQuery = Record<string, string | number | undefined> & {
  dateGte?: string;
  dateLte?: string;
};

const PAGE_SIZES = [25, 50, 100, 500];

/** The "Per page" choices, the page's own size among them (marked) when an address asked for another. */
export function pageSizeOptions(pageSize: number): Html[] {
  const sizes = PAGE_SIZES.includes(pageSize)
    ? PAGE_SIZES
    : [...PAGE_SIZES, pageSize].sort((a, b) => a - b);
  return sizes.map(
    (n) => html`<option value="${n}"${n === pageSize ? html` selected` : ""}>${n}</option>`,
  );
}

/** Previous and next links around "Page n of m", keeping the list's filters. */
export function pager(path: string, query: ListQuery, page: ListPage): Html {
  const link = (n: number, label: string, rel: string) =>
    html`<a rel="${rel}" href="${path}${queryString({ ...query, page: n })}">${label}</a>`;
  // Past the last page, "Previous" leads to the last page, not to another empty one.
  const previous = Math.min(page.page - 1, Math.max(page.totalPages, 1));
  return html`<nav class="pager" aria-label="Pages">
${page.page > 1 ? link(previous, previous === page.page - 1 ? "Previous page" : "Last page", "prev") : ""}
<span>Page ${page.page} of ${Math.max(page.totalPages, 1)}</span>
${page.page < page.totalPages ? link(page.page + 1, "Next page", "next") : ""}
</nav>`;
}

/** Why the table is empty: a page past the end, dates the wrong way round, or no match. */
export function emptyNote(noun: string, query: ListQuery, page: ListPage): string {
  if (page.totalCount > 0)
    return `Page ${page.page} is past the last page (${page.totalPages}) of the ${page.totalCount} matching ${noun}s.`;
  if (query.dateGte !== undefined && query.dateLte !== undefined && query.dateGte > query.dateLte)
    return `No ${noun} can match: From (${query.dateGte}) is after To (${query.dateLte}).`;
  return `No ${noun} matches these filters.`;
}
