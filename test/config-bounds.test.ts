import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";

/**
 * Settings that become timers are bounded at start-up (README "Configuration"): Node holds a
 * timer of at most 2^31 - 1 ms and fires a longer one at once, so WEBHOOK_TIMEOUT_MS=3000000000
 * failed every attempt at once, and a retry delay of 10^20 s made an invalid date that failed
 * every turn of the delivery job until a restart.
 */
const refused = (env: Record<string, string>, variable: string) => {
  expect(() => loadConfig(env)).toThrow(ConfigError);
  expect(() => loadConfig(env)).toThrow(new RegExp(`${variable}: must be at most`));
};

describe("a webhook attempt's timeout", () => {
  it("is at most 5 minutes", () => {
    expect(loadConfig({ WEBHOOK_TIMEOUT_MS: "300000" }).webhooks.timeoutMs).toBe(300_000);
    refused({ WEBHOOK_TIMEOUT_MS: "300001" }, "WEBHOOK_TIMEOUT_MS");
    refused({ WEBHOOK_TIMEOUT_MS: "3000000000" }, "WEBHOOK_TIMEOUT_MS");
  });
});

describe("the retry schedule", () => {
  it("has each delay at most 30 days", () => {
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: "5,2592000" }).webhooks.retrySchedule).toEqual([
      5, 2_592_000,
    ]);
    refused({ WEBHOOK_RETRY_SCHEDULE: "5,2592001" }, "WEBHOOK_RETRY_SCHEDULE");
    refused({ WEBHOOK_RETRY_SCHEDULE: "99999999999999999999" }, "WEBHOOK_RETRY_SCHEDULE");
  });
});

describe("every other setting used as a timer", () => {
  it.each([
    "REQUEST_TIMEOUT_MS",
    "IDLE_TIMEOUT_MS",
    "DB_CONNECT_TIMEOUT_MS",
    "SHUTDOWN_DRAIN_MS",
    "REFERENCE_DATA_CHECK_MS",
    "WEBHOOK_EVENTS_POLL_MS",
  ])("%s is at most 2147483647 ms", (variable) => {
    expect(() => loadConfig({ [variable]: "2147483647" })).not.toThrow();
    refused({ [variable]: "2147483648" }, variable);
  });

  it("DB_STATEMENT_TIMEOUT_MS leaves room for the client's timer, a second longer", () => {
    expect(() => loadConfig({ DB_STATEMENT_TIMEOUT_MS: "2147482647" })).not.toThrow();
    refused({ DB_STATEMENT_TIMEOUT_MS: "2147482648" }, "DB_STATEMENT_TIMEOUT_MS");
  });
});
