import type { QualityFlag } from "../../../domain/quality.js";

/** Each quality flag (CONTRACT section 6) in words, for the dashboard's tables. */
const WORDS: Record<QualityFlag, string> = {
  depth_not_monotonic: "Depth shrinks at a wider band",
  total_depth_mismatch: "Total depth is not bid + ask",
  maker_tob_exceeds_maker: "Maker volume at top of book above all maker volume",
  exceeds_public_depth: "Depth ±2 % above the public order book",
};

/** The flags in words, separated by semicolons; "None" without any. */
export function qualityFlagsText(flags: readonly string[] | undefined): string {
  if (flags === undefined || flags.length === 0) return "None";
  return flags.map((flag) => WORDS[flag as QualityFlag] ?? flag).join("; ");
}
