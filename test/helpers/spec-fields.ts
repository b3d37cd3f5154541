/**
 * The metric fields as the specification lists them (2.1, 2.2), written out here rather than
 * imported from src/, so that the tests check the code against the spec and not against itself.
 */
export const SPEC_V1_METRICS = [
  "bidDepth50",
  "askDepth50",
  "bidDepth100",
  "askDepth100",
  "bidDepth200",
  "askDepth200",
  "bidAskDepth50",
  "bidAskDepth100",
  "bidAskDepth200",
  "bidAskSpread",
  "orderFillVolumeMaker",
  "orderFillVolumeTaker",
];

/** The metrics v2 adds (spec 9.3). */
export const SPEC_V2_ONLY_METRICS = [
  "bidDepthTob",
  "bidDepth10",
  "bidDepth25",
  "askDepthTob",
  "askDepth10",
  "askDepth25",
  "topOfBookPercentage",
  "orderFillVolumeMakerTob",
];
