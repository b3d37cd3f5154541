import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { READER_KEYS } from "./helpers/accountability.js";
import type { TestApp } from "./helpers/app.js";
import { KEYS } from "./helpers/fixture.js";
import { deliveryWorld } from "./helpers/webhook-jobs.js";
import { eventually, type Received, type Receiver, verified } from "./helpers/webhook-receiver.js";

/**
 * POST /api/v1/webhooks/{id}/rotate-secret: a new secret, and the replaced one still signing
 * deliveries beside it until it expires, as the published `standardwebhooks` verifier sees it.
 */
let world: Awaited<ReturnType<typeof deliveryWorld>>;
let t: TestApp;
let receiver: Receiver;
// The service's clock runs `offsetMs` from the real one (the deliveries' clock is real time:
// the verifier checks webhook-timestamp against it).
let offsetMs = 0;

beforeAll(async () => {
  world = await deliveryWorld({ now: () => new Date(Date.now() + offsetMs), retrySchedule: [0] });
  ({ t, receiver } = world);
});
afterAll(async () => world?.close());

const subscribe = (path: string, key: string = KEYS.acme) => world.subscribe(path, key);

const rotate = (id: string, payload?: unknown, key: string = KEYS.acme) =>
  t.request({
    method: "POST",
    url: `/api/v1/webhooks/${id}/rotate-secret`,
    key,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

/** Sends webhook.test to the endpoint and waits for the `n`th request at `path`. */
async function testDelivery(id: string, path: string, n: number): Promise<Received> {
  const sent = await t.request({
    method: "POST",
    url: `/api/v1/webhooks/${id}/test`,
    key: KEYS.acme,
  });
  expect(sent.statusCode).toBe(202);
  const all = await eventually(
    () => receiver.at(path).length >= n && receiver.at(path),
    `delivery ${n} at ${path}`,
  );
  return all[n - 1] as Received;
}

const signatures = (request: Received) => String(request.headers["webhook-signature"]).split(" ");

describe("rotating a webhook's signing secret", () => {
  it("answers a new secret; deliveries verify with the new and the replaced one for 24 hours", async () => {
    const hook = await subscribe("/rotate-default");
    const before = Date.now();
    const response = await rotate(hook.id);
    expect(response.statusCode).toBe(200);
    const rotated = response.json();
    expect(Object.keys(rotated)).toEqual(["id", "secret", "previousSecretExpiresAt"]);
    expect(rotated.id).toBe(hook.id);
    expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rotated.secret).not.toBe(hook.secret);
    const expires = Date.parse(rotated.previousSecretExpiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + 24 * 3600_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 24 * 3600_000);

    const request = await testDelivery(hook.id, "/rotate-default", 1);
    expect(signatures(request)).toHaveLength(2);
    expect(verified(rotated.secret, request).type).toBe("webhook.test");
    expect(verified(hook.secret, request).type).toBe("webhook.test");
    // The new secret's signature comes first.
    const onlyNew = { ...request, headers: { ...request.headers } };
    onlyNew.headers["webhook-signature"] = signatures(request)[0];
    expect(verified(rotated.secret, onlyNew).type).toBe("webhook.test");
    // The secret is in this answer only.
    const shown = await t.request({ url: `/api/v1/webhooks/${hook.id}`, key: KEYS.acme });
    expect(Object.keys(shown.json())).not.toContain("secret");
    expect(shown.body).not.toContain(rotated.secret.slice(6, 20));
  });

  it("previousSecretValidForSeconds 0: the replaced secret stops at once", async () => {
    const hook = await subscribe("/rotate-zero");
    const response = await rotate(hook.id, { previousSecretValidForSeconds: 0 });
    expect(response.statusCode).toBe(200);
    expect(response.json().previousSecretExpiresAt).toBeNull();
    const request = await testDelivery(hook.id, "/rotate-zero", 1);
    expect(signatures(request)).toHaveLength(1);
    expect(verified(response.json().secret, request).type).toBe("webhook.test");
    expect(() => verified(hook.secret, request)).toThrow();
  });

  it("once the replaced secret expired, deliveries carry the new signature alone", async () => {
    const hook = await subscribe("/rotate-expired");
    offsetMs = -2 * 3600_000;
    const response = await rotate(hook.id, { previousSecretValidForSeconds: 3600 });
    offsetMs = 0;
    expect(response.statusCode).toBe(200);
    expect(Date.parse(response.json().previousSecretExpiresAt)).toBeLessThan(Date.now());
    const request = await testDelivery(hook.id, "/rotate-expired", 1);
    expect(signatures(request)).toHaveLength(1);
    expect(() => verified(hook.secret, request)).toThrow();
    expect(verified(response.json().secret, request).type).toBe("webhook.test");
  });

  it("a rotation repeated within the window ends no secret a receiver may hold", async () => {
    const hook = await subscribe("/rotate-twice");
    const first = (await rotate(hook.id)).json().secret;
    const second = (await rotate(hook.id, { previousSecretValidForSeconds: 600 })).json().secret;
    const request = await testDelivery(hook.id, "/rotate-twice", 1);
    expect(signatures(request)).toHaveLength(3);
    for (const secret of [second, first, hook.secret])
      expect(verified(secret, request).type).toBe("webhook.test");
  });

  it("rotations at once all keep their secrets valid", async () => {
    const hook = await subscribe("/rotate-at-once");
    const answers = await Promise.all(Array.from({ length: 5 }, () => rotate(hook.id)));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 200]);
    const request = await testDelivery(hook.id, "/rotate-at-once", 1);
    expect(signatures(request)).toHaveLength(6);
    for (const secret of [hook.secret, ...answers.map((a) => a.json().secret)])
      expect(verified(secret, request).type).toBe("webhook.test");
  });

  it("at most 10 replaced secrets at once; 0 ends them all", async () => {
    const hook = await subscribe("/rotate-many");
    for (let i = 0; i < 10; i++) expect((await rotate(hook.id)).statusCode).toBe(200);
    const eleventh = await rotate(hook.id);
    expect(eleventh.statusCode).toBe(409);
    expect(eleventh.json().message).toBe(
      "10 replaced secrets of this webhook still sign deliveries: rotate with previousSecretValidForSeconds 0 (ends them all) or wait until one expires",
    );
    const leak = await rotate(hook.id, { previousSecretValidForSeconds: 0 });
    expect(leak.statusCode).toBe(200);
    const request = await testDelivery(hook.id, "/rotate-many", 1);
    expect(signatures(request)).toHaveLength(1);
    expect(verified(leak.json().secret, request).type).toBe("webhook.test");
    expect((await rotate(hook.id)).statusCode).toBe(200);
  });

  it("every caller kind rotates its own endpoints only", async () => {
    const projectHook = await subscribe("/rotate-project", READER_KEYS.chainlinkLabs);
    expect((await rotate(projectHook.id, {}, READER_KEYS.chainlinkLabs)).statusCode).toBe(200);
    const other = await rotate(projectHook.id, {}, KEYS.acme);
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual({
      statusCode: 404,
      error: "Not Found",
      message: "Webhook not found",
    });
    expect((await rotate("0f8fad5b-d9cb-469f-a165-70867728950e")).statusCode).toBe(404);
    expect((await rotate("not-a-uuid")).statusCode).toBe(404);
  });
});

describe("rotate-secret's body", () => {
  let id: string;
  beforeAll(async () => {
    id = (await subscribe("/rotate-body")).id;
  });

  const cases: [unknown, string][] = [
    [{ previousSecretValidForSeconds: -1 }, "Number must be greater than or equal to 0"],
    [{ previousSecretValidForSeconds: 604801 }, "Number must be less than or equal to 604800"],
    [{ previousSecretValidForSeconds: 1.5 }, "Expected integer, received float"],
    [{ previousSecretValidForSeconds: "60" }, "Expected number, received string"],
  ];
  for (const [payload, message] of cases) {
    it(`refuses ${JSON.stringify(payload)} with a 400, rotating nothing`, async () => {
      const response = await rotate(id, payload);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({
        statusCode: 400,
        error: "Bad Request",
        message: [{ path: "previousSecretValidForSeconds", message }],
      });
    });
  }

  it("takes no body, an empty object, unknown fields and the 7-day maximum", async () => {
    expect((await rotate(id)).statusCode).toBe(200);
    expect((await rotate(id, {})).statusCode).toBe(200);
    expect((await rotate(id, { reason: "leaked" })).statusCode).toBe(200);
    const longest = await rotate(id, { previousSecretValidForSeconds: 604800 });
    expect(longest.statusCode).toBe(200);
    expect(Date.parse(longest.json().previousSecretExpiresAt)).toBeGreaterThan(
      Date.now() + 604700_000,
    );
  });

  it("takes an empty body labelled application/json as none", async () => {
    const response = await t.request({
      method: "POST",
      url: `/api/v1/webhooks/${id}/rotate-secret`,
      key: KEYS.acme,
      headers: { "content-type": "application/json", "content-length": "0" },
    });
    expect(response.statusCode).toBe(200);
  });

  it("is documented as optional", async () => {
    const document = (await t.app.inject({ url: "/openapi.json" })).json();
    const operation = document.paths["/api/v1/webhooks/{id}/rotate-secret"].post;
    expect(operation.requestBody.required).toBe(false);
    const signature = document.webhooks["kpi.missed"].post.parameters.find(
      (p: { name: string }) => p.name === "webhook-signature",
    );
    expect(new RegExp(signature.schema.pattern).test("v1,YWJj v1,ZGVm")).toBe(true);
  });

  it("refuses a body that is not an object", async () => {
    const response = await rotate(id, [1]);
    expect(response.statusCode).toBe(400);
  });
});
