import type { FastifyRequest } from "fastify";
import { z } from "zod";
import { NotFoundError } from "../../../domain/errors.js";
import { INSTRUMENT_TYPES } from "../../../domain/report.js";
import { MAX_ID_LENGTH, storableText } from "../../../schemas/text.js";
import { type Html, html } from "../html.js";
import { decodeSegment } from "../path-segment.js";
import { coinPath, makerPath } from "../views/market-links.js";

export const RANGE_PRESETS = [
  { days: 7, label: "7 days" },
  { days: 30, label: "30 days" },
  { days: 90, label: "90 days" },
  { days: 366, label: "1 year" },
] as const;

// Text the database can hold (no NUL, no lone surrogate): anything else names no page.
const id = storableText(MAX_ID_LENGTH).transform(decodeSegment);
export const coinParams = z.object({ baseCoinId: id });
export const makerParams = coinParams.extend({ organizationId: id });
export const marketParams = makerParams.extend({
  exchangeId: id,
  quote: id,
  instrumentType: z.enum(INSTRUMENT_TYPES),
});

/** Route parameters no page can have are a 404, as any page outside the caller's scope. */
export function paramsOf<T>(schema: z.ZodType<T>, request: FastifyRequest): T {
  const parsed = schema.safeParse(request.params);
  if (!parsed.success) throw new NotFoundError("Not found");
  return parsed.data;
}

/** The navigation entry a coin's pages sit under: the market maker's markets, else the coins. */
export const sectionOf = (request: FastifyRequest): string =>
  request.dashboard.caller.kind === "market_maker" ? "/app/markets" : "/app/coins";

/**
 * Where a page sits: under the project's and operator's coins (then the market maker, by name),
 * or the market maker's markets.
 */
export function trail(
  request: FastifyRequest,
  key: { baseCoinId: string; organizationId?: string },
  organizationName?: string,
): Html {
  const own = request.dashboard.caller.kind === "market_maker";
  const crumbs = own
    ? [html`<a href="/app/markets">Markets</a>`]
    : [
        html`<a href="/app/coins">Coins</a>`,
        html`<a href="${coinPath(key.baseCoinId)}">${key.baseCoinId}</a>`,
      ];
  if (key.organizationId !== undefined) {
    const maker = { baseCoinId: key.baseCoinId, organizationId: key.organizationId };
    crumbs.push(
      html`<a href="${makerPath(maker)}">${own ? key.baseCoinId : (organizationName ?? key.organizationId)}</a>`,
    );
  }
  return html`<nav aria-label="Breadcrumb" class="trail"><ol>${crumbs.map((c) => html`<li>${c}</li>`)}</ol></nav>`;
}
