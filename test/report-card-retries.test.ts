import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Record } from "./helpers/fixture.js";
import { submit } from "./helpers/submission.js";

// A 409 "in progress" answers a retry of a batch another request with the same
// Idempotency-Key is storing (`trading-reports submit` retries it every half second): it is
// in the submission log (CONTRACT 5) but refuses nothing, and the report card counted each
// one as a rejected submission of the whole batch's records.
let clock = new Date("2026-10-05T10:00:00Z");
let t: TestApp;
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

beforeAll(async () => {
  t = await startTestApp({ now: () => clock });
  const body = { data: [v2Record({ date: "2026-10-01" }), v2Record({ date: "2026-10-02" })] };
  const payload = JSON.stringify(body);
  const key = randomUUID();
  // The first request holds the key (its process is still storing the batch).
  const held = await t.database.stores.idempotency.claim(
    {
      organizationId: "acme",
      key,
      claim: randomUUID(),
      requestHash: sha256(`v2\ndry-run=false\n${sha256(payload)}`),
    },
    clock,
    new Date(clock.getTime() + 60_000),
  );
  expect(held).toEqual({ claimed: true });
  for (let i = 0; i < 3; i++) {
    const retry = await submit(t, 2, payload, { headers: { "idempotency-key": key } });
    expect(retry.statusCode).toBe(409);
  }
  // A batch refused for its data counts, as before.
  const refused = await submit(t, 2, { data: [v2Record({ date: "2026-10-03", bidDepth50: -1 })] });
  expect(refused.statusCode).toBe(400);
  expect((await submit(t, 2, body)).statusCode).toBe(201);
  clock = new Date("2026-11-20T10:00:00Z");
});
afterAll(async () => t?.close());

describe("the report card and retries of a batch in progress", () => {
  it("counts neither the 409s nor their records as rejected, while the log keeps them", async () => {
    const card = await t.request({ url: "/api/v1/report-card?month=2026-10", key: KEYS.acme });
    expect(card.statusCode, card.body).toBe(200);
    expect(card.json()).toMatchObject({
      submissions: 2,
      rejectedSubmissions: 1,
      recordsAccepted: 2,
      recordsRejected: 1,
    });
    expect(card.json().problemsByCode).toEqual({ below_minimum: 1 });
    expect(card.json().problemsByField).toEqual({ bidDepth50: 1 });
    const log = await t.request({ url: "/api/v1/submissions?status=rejected", key: KEYS.acme });
    expect(log.json().totalCount).toBe(4);
  });
});
