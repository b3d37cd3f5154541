import { type ListQuery, MAX_PAGE_SIZE } from "../schemas/list-query.js";

/** A page of the listing: its number and size, and where its first report is. */
export type ListPage = {
  page: number;
  pageSize: number;
  /** Reports before the page; undefined when the page lies past the end of any listing. */
  offset: number | undefined;
};

/**
 * The page a listing query asks for. Its offset is left out when it exceeds 2^53 - 1: no
 * listing holds that many reports, so the page is empty without asking the database, which
 * is never sent an offset a JavaScript number cannot hold exactly (a product above 2^53 - 1
 * comes out of the multiplication at 2^53 or more, so the comparison is exact).
 */
export function listPageOf(query: Pick<ListQuery, "page" | "pageSize">): ListPage {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? MAX_PAGE_SIZE;
  const offset = (page - 1) * pageSize;
  return { page, pageSize, offset: offset <= Number.MAX_SAFE_INTEGER ? offset : undefined };
}
