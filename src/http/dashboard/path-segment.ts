/**
 * A dashboard address's path segments. Percent-encoding carries any value but "." and "..":
 * browsers resolve those (even as %2E) before a request is sent, so a market whose quote
 * symbol is ".." would have no address. Such a segment gets one "~" in front, and so does
 * one that is already "~" and dots, so that decoding (one "~" off) gives every value back.
 * Every other value is its plain percent-encoding.
 */
const DOTS = /^~*\.\.?$/;

export const encodeSegment = (value: string): string =>
  encodeURIComponent(DOTS.test(value) ? `~${value}` : value);

/** The value of a decoded route parameter `encodeSegment` wrote. */
export const decodeSegment = (segment: string): string =>
  DOTS.test(segment) && segment.startsWith("~") ? segment.slice(1) : segment;
