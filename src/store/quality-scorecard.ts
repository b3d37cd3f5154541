/** Median share of the public ±2 % book a market maker reports, per side; null: no snapshot. */
export type DepthShares = { bid: number | null; ask: number | null };

const round4 = (share: number | string | null): number | null =>
  share === null ? null : Math.round(Number(share) * 10_000) / 10_000;

/** A scorecard row's shares (as PostgreSQL returns them), rounded to 4 decimals. */
export function depthSharesOf(bid: number | string | null, ask: number | string | null) {
  return { bid: round4(bid), ask: round4(ask) };
}
