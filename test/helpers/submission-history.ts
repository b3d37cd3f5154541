import { expect } from "vitest";
import { KEYS, v2Record } from "./fixture.js";
import type { World } from "./scorecard-world.js";

/**
 * Acme sends a batch of three with two bad records at 2025-03-08 10:00 UTC (after the
 * scorecard world's last submission) under an Idempotency-Key; returns its submission id.
 */
export async function rejectedBatch(world: World): Promise<string> {
  world.setClock(new Date("2025-03-08T10:00:00Z"));
  const response = await world.t.request({
    method: "POST",
    url: "/api/v2/report",
    key: KEYS.acme,
    headers: { "idempotency-key": "nightly-2025-03-07" },
    payload: {
      data: [
        v2Record({ date: "2025-02-30" }),
        v2Record({ date: "2025-03-07" }),
        v2Record({ date: "2025-03-07", baseCoinId: "chainlnk" }),
      ],
    },
  });
  expect(response.statusCode, response.body).toBe(400);
  return String(response.headers["x-submission-id"]);
}
