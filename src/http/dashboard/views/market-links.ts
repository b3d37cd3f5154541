import type { z } from "zod";
import { addDays } from "../../../domain/dates.js";
import { scorecardQuerySchema } from "../../../schemas/scorecards.js";
import type { MarketKey } from "../../../services/dashboard-market.js";
import { type Html, html } from "../html.js";
import { parseFormQuery } from "../pages/form-query.js";
import { encodeSegment } from "../path-segment.js";

const segment = encodeSegment;

/** Where the coin, market maker, calendar and market pages live (one place builds them). */
export const coinPath = (baseCoinId: string) => `/app/coins/${segment(baseCoinId)}`;
export const makerPath = (key: { organizationId: string; baseCoinId: string }) =>
  `${coinPath(key.baseCoinId)}/${segment(key.organizationId)}`;
export const calendarPath = (key: { organizationId: string; baseCoinId: string }) =>
  `${makerPath(key)}/calendar`;
export const marketPath = (m: MarketKey) =>
  `${makerPath(m)}/markets/${segment(m.exchangeId)}/${segment(m.quote)}/${segment(m.instrumentType)}`;

const rangeQuerySchema = scorecardQuerySchema.pick({ dateGte: true, dateLte: true });
export type RangeQuery = z.infer<typeof rangeQuerySchema>;

/** The `dateGte`/`dateLte` of a page's query (as a form sends it); a bad date is a 400 page. */
export function rangeOf(query: unknown): RangeQuery {
  return parseFormQuery(rangeQuerySchema, query);
}

/** Days shown by each preset link, and the form to choose any range (both ends included). */
export function rangeForm(
  path: string,
  range: { dateGte: string; dateLte: string },
  presets: readonly { days: number; label: string }[],
): Html {
  const links = presets.map(
    ({ days, label }) =>
      html`<li><a href="${path}?dateGte=${addDays(range.dateLte, -(days - 1))}&amp;dateLte=${range.dateLte}">${label}</a></li>`,
  );
  return html`<form class="filters" method="get" action="${path}">
<label>From <input type="date" name="dateGte" value="${range.dateGte}"></label>
<label>To <input type="date" name="dateLte" value="${range.dateLte}"></label>
<button type="submit">Show</button>
</form>
<nav aria-label="Ranges ending ${range.dateLte}"><ul class="presets">${links}</ul></nav>`;
}

/**
 * A number as the reports (or an obligation) hold it, every digit of it (no rounding), grouped
 * by thousands as the Reports table groups them; `dashboard-charts.js` reads it back without
 * the commas.
 */
export const figure = (value: number | null | undefined) =>
  value === null || value === undefined ? "–" : grouped(String(value));

/**
 * A median computed from reports, at 15 significant digits: computed in binary floating point
 * (183875.90500000003), it shows as the decimal it stands for (183,875.905). Only for computed
 * figures: a submitted value may carry 17 significant digits, which `figure` keeps.
 */
export const medianFigure = (value: number | null | undefined) =>
  value === null || value === undefined ? "–" : grouped(String(Number(value.toPrecision(15))));

/**
 * A submitted figure with thousands separators and every decimal it was submitted with (no
 * rounding: 0.0999 is not 0.1, the way `toLocaleString` would round it to three decimals).
 */
export function groupedFigure(value: number | null | undefined): string {
  if (value === null || value === undefined) return "—";
  return grouped(String(value));
}

/** A number's text with commas between its whole part's thousands (an exponent form as is). */
function grouped(text: string): string {
  if (text.includes("e")) return text;
  const [whole = "", fraction] = text.split(".");
  const withCommas = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return fraction === undefined ? withCommas : `${withCommas}.${fraction}`;
}

/** compliance (0..1) as a percentage with up to two decimals. */
export const percent = (value: number | null) =>
  value === null ? "–" : `${Math.round(value * 10_000) / 100} %`;

/** "1 day", "2 days". */
export const dayCount = (n: number) => (n === 1 ? "1 day" : `${n} days`);

export const marketName = (m: { exchangeId: string; quote: string; instrumentType: string }) =>
  `${m.exchangeId} · ${m.quote} · ${m.instrumentType}`;
