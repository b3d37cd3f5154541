import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Record } from "./helpers/fixture.js";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe("smoke", () => {
  it("stores a v2 report and lists it", async () => {
    const post = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      payload: { data: [v2Record()] },
    });
    expect(post.statusCode).toBe(201);
    expect(post.json()).toEqual({ createdCount: 1, updatedCount: 0 });
    const again = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      payload: { data: [v2Record()] },
    });
    expect(again.json()).toEqual({ createdCount: 0, updatedCount: 1 });
    const list = await t.request({ method: "GET", url: "/api/v1/reports", key: KEYS.acme });
    expect(list.statusCode).toBe(200);
    expect(list.json().totalCount).toBe(1);
    expect(list.json().items[0]).toMatchObject({
      exchangeName: "Binance",
      baseCoinSymbol: "LINK",
      eligibilityStatus: "eligible",
    });
  });
});
