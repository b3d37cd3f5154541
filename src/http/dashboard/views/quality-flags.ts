import type { QualityFlag } from "../../../domain/quality.js";

/**
 * Each quality flag (CONTRACT section 6) in a few words, short enough for a table column at
 * 1280 px (README "Data quality" says what each one means).
 */
const WORDS: Record<QualityFlag, string> = {
  depth_not_monotonic: "Depth shrinks at wider band",
  total_depth_mismatch: "Total ≠ bid + ask",
  maker_tob_exceeds_maker: "Maker top of book > maker",
  exceeds_public_depth: "Above public book ±2 %",
};

/** The flags in words, separated by semicolons; "None" without any. */
export function qualityFlagsText(flags: readonly string[] | undefined): string {
  if (flags === undefined || flags.length === 0) return "None";
  return flags.map((flag) => WORDS[flag as QualityFlag] ?? flag).join("; ");
}
