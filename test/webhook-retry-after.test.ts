import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  MAX_RECEIVER_RETRY_AFTER_SECONDS,
  postponedBy,
  retryAfterSeconds,
} from "../src/domain/webhook.js";
import type { TestApp } from "./helpers/app.js";
import { KEYS } from "./helpers/fixture.js";
import { deliveryWorld } from "./helpers/webhook-jobs.js";
import { eventually, type Receiver } from "./helpers/webhook-receiver.js";

/** A receiver's Retry-After (on a 429 or a 503) puts the delivery's next attempt off, never on. */
describe("Retry-After, read", () => {
  const at = new Date("2026-11-29T12:00:00Z");
  it("takes seconds or an HTTP date, capped at 24 hours; anything else is no wait", () => {
    expect(retryAfterSeconds("120", at)).toBe(120);
    expect(retryAfterSeconds(" 5 ", at)).toBe(5);
    expect(retryAfterSeconds("Sun, 29 Nov 2026 12:01:30 GMT", at)).toBe(90);
    expect(retryAfterSeconds("999999999", at)).toBe(MAX_RECEIVER_RETRY_AFTER_SECONDS);
    expect(retryAfterSeconds("9".repeat(400), at)).toBe(MAX_RECEIVER_RETRY_AFTER_SECONDS);
    // Free text is no date, however leniently Date.parse reads it.
    expect(retryAfterSeconds("maintenance until 2027", at)).toBeUndefined();
    expect(retryAfterSeconds("2027-01-01", at)).toBeUndefined();
    for (const unreadable of [
      undefined,
      "",
      "0",
      "-5",
      "1.5",
      "soon",
      "Sun, 29 Nov 2026 11:00:00 GMT",
    ])
      expect(retryAfterSeconds(unreadable, at), String(unreadable)).toBeUndefined();
  });

  it("postpones a scheduled attempt to the receiver's time when later, and adds none", () => {
    const soon = new Date(at.getTime() + 5_000);
    expect(postponedBy(soon, at, 60)).toEqual(new Date(at.getTime() + 60_000));
    expect(postponedBy(soon, at, 2)).toEqual(soon);
    expect(postponedBy(soon, at, undefined)).toEqual(soon);
    expect(postponedBy(null, at, 60)).toBeNull();
  });
});

let world: Awaited<ReturnType<typeof deliveryWorld>>;
let t: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  world = await deliveryWorld({ retrySchedule: [0, 0] });
  ({ t, receiver } = world);
});
afterAll(async () => world?.close());

type Entry = {
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  nextAttemptAt: string | null;
};

/** Subscribes `path`, sends it webhook.test, and waits for the first attempt's record. */
async function firstAttempt(path: string): Promise<Entry> {
  const { id } = await world.subscribe(path);
  await t.request({ method: "POST", url: `/api/v1/webhooks/${id}/test`, key: KEYS.acme });
  return eventually(async () => {
    const log = await t.request({ url: `/api/v1/webhooks/${id}/deliveries`, key: KEYS.acme });
    const [entry] = log.json().items as Entry[];
    return entry !== undefined && entry.attempts >= 1 && entry;
  }, `the first attempt at ${path}`);
}

describe("Retry-After, honoured", () => {
  it("a 429 asking for an hour: the next attempt is an hour on, not at once", async () => {
    receiver.answer("/busy", 429, 429, 429);
    receiver.retryAfter("/busy", "3600");
    const before = Date.now();
    const entry = await firstAttempt("/busy");
    expect(entry).toMatchObject({ status: "pending", attempts: 1, lastStatusCode: 429 });
    const next = Date.parse(String(entry.nextAttemptAt));
    expect(next).toBeGreaterThanOrEqual(before + 3600_000);
    expect(next).toBeLessThanOrEqual(Date.now() + 3600_000);
    expect(receiver.at("/busy")).toHaveLength(1);
  });

  it("a 503 with an HTTP date is honoured too", async () => {
    receiver.answer("/maintenance", 503);
    receiver.retryAfter("/maintenance", new Date(Date.now() + 7200_000).toUTCString());
    const entry = await firstAttempt("/maintenance");
    expect(Date.parse(String(entry.nextAttemptAt))).toBeGreaterThan(Date.now() + 7000_000);
  });

  it("a 500's Retry-After is not: the schedule goes on", async () => {
    receiver.answer("/broken", 500);
    receiver.retryAfter("/broken", "3600");
    await firstAttempt("/broken");
    await eventually(() => receiver.at("/broken").length >= 2, "the scheduled second attempt");
  });
});
