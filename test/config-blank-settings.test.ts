import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { environmentSchema } from "../src/config-environment.js";

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

describe("every setting left empty or blank", () => {
  // Every variable the README's configuration table names, read from the schema itself.
  const names = Object.keys(environmentSchema.shape);

  it.each([
    "",
    " ",
    "\t ",
  ])("is unset when set to %j: the configuration is the defaults", (blank) => {
    const env = Object.fromEntries(names.map((name) => [name, blank]));
    expect(loadConfig(env)).toEqual(loadConfig({}));
  });
});

describe("settings that JavaScript would read leniently", () => {
  const problem = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return "accepted";
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message.replace("invalid environment: ", "");
    }
  };

  it.each([
    [{ PORT: "0x50" }, "PORT: must be a whole number"],
    [{ PORT: "1.8082e4" }, "PORT: must be a whole number"],
    [{ PORT: "70000" }, "PORT: Number must be less than or equal to 65535"],
    [{ METRICS_PORT: "8e3" }, "METRICS_PORT: must be a whole number"],
    [{ DB_POOL_SIZE: "1_0" }, "DB_POOL_SIZE: must be a whole number"],
    [{ PUBLIC_DEPTH_TOLERANCE: "Infinity" }, "PUBLIC_DEPTH_TOLERANCE: must be a number"],
    [{ PUBLIC_DEPTH_TOLERANCE: "0x1" }, "PUBLIC_DEPTH_TOLERANCE: must be a number"],
    [{ DATABASE_URL: "postgres://u:p@127.0.0.1:99999/db" }, "DATABASE_URL: must be a valid URL"],
    [{ DATABASE_URL: "postgres://u:p@[bad/db" }, "DATABASE_URL: must be a valid URL"],
    [{ DATABASE_READ_URL: "postgres://h:abc/db" }, "DATABASE_READ_URL: must be a valid URL"],
    [{ REDIS_URL: "http://x" }, "REDIS_URL: must be a redis:// (or rediss://) URL"],
    [
      { TRUST_PROXY: "notanip" },
      "TRUST_PROXY: must be addresses or CIDRs, comma-separated (e.g. 10.0.0.2,10.1.0.0/16)",
    ],
    [
      { TRUST_PROXY: "10.0.0.0/33" },
      "TRUST_PROXY: must be addresses or CIDRs, comma-separated (e.g. 10.0.0.2,10.1.0.0/16)",
    ],
    // What the server's matcher refuses at start, refused here first, naming the variable.
    [
      { TRUST_PROXY: "0.0.0.0/0" },
      "TRUST_PROXY: must be addresses or CIDRs, comma-separated (e.g. 10.0.0.2,10.1.0.0/16)",
    ],
    [
      { TRUST_PROXY: "10.0.0.0/255.0.255.0" },
      "TRUST_PROXY: must be addresses or CIDRs, comma-separated (e.g. 10.0.0.2,10.1.0.0/16)",
    ],
  ])("%j is refused: %s", (env, message) => {
    expect(problem(env)).toBe(message);
  });

  it("accepts what they should, and names every bad variable at once", () => {
    const config = loadConfig({
      PORT: " 08080 ",
      PUBLIC_DEPTH_TOLERANCE: "2.5e-1",
      TRUST_PROXY: "10.0.0.1, 10.1.0.0/16,loopback,::1/64,10.0.0.0/255.0.0.0",
      REDIS_URL: "REDISS://cache.internal:6380/2",
    });
    expect(config.listen.port).toBe(8080);
    expect(config.publicDepthTolerance).toBe(0.25);
    expect(config.rateLimitStore).toBe("redis");
    expect(loadConfig({ PUBLIC_DEPTH_TOLERANCE: ".5" }).publicDepthTolerance).toBe(0.5);
    // A Unix socket, as pg reads it: no host in the URL, the socket directory as a parameter.
    for (const url of [
      "postgresql://app:secret@/appdb?host=/var/run/postgresql",
      "postgresql:///appdb?host=/var/run/postgresql",
    ]) {
      expect(loadConfig({ DATABASE_URL: url }).database).toMatchObject({ kind: "postgres", url });
    }
    expect(problem({ REPORT_DEADLINE_UTC: "25:00", RATE_LIMIT_STORE: "redis", PORT: "x" })).toBe(
      "PORT: must be a whole number; REPORT_DEADLINE_UTC: must be a time of day HH:MM, 00:00 to 23:59 (UTC); RATE_LIMIT_STORE: RATE_LIMIT_STORE=redis needs REDIS_URL",
    );
  });
});
