import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";

// An env file's `NAME=` is unset, as the README's configuration table says: a number setting
// left blank takes its default. `z.coerce.number` read it as 0, so PUBLIC_DEPTH_TOLERANCE=
// flagged every report whose depth was above the public book at all.
describe("number settings left blank", () => {
  it.each(["", "  "])("take their defaults when set to %j", (blank) => {
    const config = loadConfig({
      PUBLIC_DEPTH_TOLERANCE: blank,
      REFERENCE_DATA_CHECK_MS: blank,
      SHUTDOWN_DRAIN_MS: blank,
      AUTH_FAILURES_PER_MINUTE: blank,
    });
    const defaults = loadConfig({});
    expect(config.publicDepthTolerance).toBe(0.1);
    expect(config.referenceDataCheckMs).toBe(defaults.referenceDataCheckMs);
    expect(config.http.authFailuresPerMinute).toBe(defaults.http.authFailuresPerMinute);
    expect(config).toEqual(defaults);
  });

  it("still reads 0 as 0 where 0 is allowed, and refuses what is not a number", () => {
    expect(loadConfig({ PUBLIC_DEPTH_TOLERANCE: "0" }).publicDepthTolerance).toBe(0);
    expect(() => loadConfig({ PUBLIC_DEPTH_TOLERANCE: "ten" })).toThrow(ConfigError);
    expect(() => loadConfig({ AUTH_FAILURES_PER_MINUTE: "0" })).toThrow(ConfigError);
  });
});
