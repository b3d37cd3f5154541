import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountabilityFixture, READER_KEYS } from "./helpers/accountability.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS } from "./helpers/fixture.js";

/**
 * CONTRACT section 7, the subscriptions API without the development flag: create (secret once),
 * list, show, update, delete, test, delivery log, retry; 404s across organizations; the limit;
 * 400s for bad bodies and for targets that are not https or not public (SSRF).
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({
    fixture: accountabilityFixture(),
    env: { WEBHOOKS_PER_ORGANIZATION: "3" },
  });
});
afterAll(async () => t?.close());

// A public address literal: no DNS needed, and nothing is ever sent (no delivery job here).
const PUBLIC_URL = "https://93.184.215.14/hooks/trading-reports";

const create = (key: string, payload: unknown) =>
  t.request({ method: "POST", url: "/api/v1/webhooks", key, payload: payload as object });

describe("webhook subscriptions", () => {
  it("creates an endpoint with a secret shown once, then lists and shows it without", async () => {
    const created = await create(KEYS.acme, {
      url: PUBLIC_URL,
      events: ["kpi.missed", "report.missing", "kpi.missed"],
      description: "ops",
    });
    expect(created.statusCode).toBe(201);
    const body = created.json();
    expect(body).toEqual({
      id: expect.any(String),
      url: PUBLIC_URL,
      events: ["kpi.missed", "report.missing"],
      description: "ops",
      disabled: false,
      createdAt: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(Buffer.from(body.secret.slice(6), "base64")).toHaveLength(32);

    const list = await t.request({ method: "GET", url: "/api/v1/webhooks", key: KEYS.acme });
    expect(list.statusCode).toBe(200);
    const { secret: _secret, ...visible } = body;
    expect(list.json().items).toEqual([visible]);
    // The 201 says where the created endpoint is, as the OpenAPI document states.
    expect(created.headers.location).toBe(`/api/v1/webhooks/${body.id}`);
    const document = (await t.app.inject({ url: "/openapi.json" })).json();
    const headers = document.paths["/api/v1/webhooks"].post.responses["201"].headers;
    expect(headers.Location).toEqual({ $ref: "#/components/headers/Location" });
    const shown = await t.request({ url: created.headers.location as string, key: KEYS.acme });
    expect(shown.json()).toEqual(visible);
    expect(shown.body).not.toContain("whsec_");
  });

  it("lets every caller kind subscribe, each seeing only its own endpoints", async () => {
    for (const key of [READER_KEYS.chainlinkLabs, READER_KEYS.operator]) {
      const created = await create(key, { url: PUBLIC_URL, events: ["*"] });
      expect(created.statusCode).toBe(201);
      expect(created.json().events).toEqual(["*"]);
      const list = await t.request({ url: "/api/v1/webhooks", key });
      expect(list.json().items.map((w: { id: string }) => w.id)).toEqual([created.json().id]);
    }
  });

  it("answers 404 'Webhook not found' for another organization's id, a malformed id and a deleted one", async () => {
    const { id } = (await create(KEYS.globex, { url: PUBLIC_URL, events: ["*"] })).json();
    const notFound = {
      statusCode: 404,
      error: "Not Found",
      message: "Webhook not found",
    };
    for (const [method, url] of [
      ["GET", `/api/v1/webhooks/${id}`],
      ["PATCH", `/api/v1/webhooks/${id}`],
      ["DELETE", `/api/v1/webhooks/${id}`],
      ["POST", `/api/v1/webhooks/${id}/test`],
      ["GET", `/api/v1/webhooks/${id}/deliveries`],
      ["POST", `/api/v1/webhooks/${id}/deliveries/${id}/retry`],
      ["GET", "/api/v1/webhooks/not-a-uuid"],
    ] as const) {
      const response = await t.request({
        method,
        url,
        key: KEYS.acme,
        ...(method === "PATCH" ? { payload: { description: "mine now" } } : {}),
      });
      expect(response.statusCode, `${method} ${url}`).toBe(404);
      expect(response.json()).toEqual(notFound);
    }
    expect(
      (await t.request({ url: `/api/v1/webhooks/${id}`, key: KEYS.globex })).json().description,
    ).toBeNull();

    expect(
      (await t.request({ method: "DELETE", url: `/api/v1/webhooks/${id}`, key: KEYS.globex }))
        .statusCode,
    ).toBe(204);
    const again = await t.request({
      method: "DELETE",
      url: `/api/v1/webhooks/${id}`,
      key: KEYS.globex,
    });
    expect(again.statusCode).toBe(404);
  });

  it("updates url, events, description and disabled", async () => {
    const { id } = (await create(KEYS.globex, { url: PUBLIC_URL, events: ["*"] })).json();
    const patched = await t.request({
      method: "PATCH",
      url: `/api/v1/webhooks/${id}`,
      key: KEYS.globex,
      payload: {
        url: "https://[2606:4700:4700::1111]/hook",
        events: ["report.late"],
        description: "late ones",
        disabled: true,
      },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({
      url: "https://[2606:4700:4700::1111]/hook",
      events: ["report.late"],
      description: "late ones",
      disabled: true,
    });
    const test = await t.request({
      method: "POST",
      url: `/api/v1/webhooks/${id}/test`,
      key: KEYS.globex,
    });
    expect(test.statusCode).toBe(409);
    const enabled = await t.request({
      method: "PATCH",
      url: `/api/v1/webhooks/${id}`,
      key: KEYS.globex,
      payload: { disabled: false, description: null },
    });
    expect(enabled.json()).toMatchObject({ disabled: false, description: null });
  });

  it("queues webhook.test for that endpoint only and logs it, newest first; a retry is accepted", async () => {
    const { id } = (await create(KEYS.acme, { url: PUBLIC_URL, events: ["report.late"] })).json();
    for (let i = 0; i < 2; i++) {
      const test = await t.request({
        method: "POST",
        url: `/api/v1/webhooks/${id}/test`,
        key: KEYS.acme,
      });
      expect(test.statusCode).toBe(202);
    }
    const log = await t.request({
      url: `/api/v1/webhooks/${id}/deliveries?pageSize=1`,
      key: KEYS.acme,
    });
    expect(log.statusCode).toBe(200);
    const page = log.json();
    expect(page).toMatchObject({ page: 1, totalPages: 2, totalCount: 2 });
    expect(page.items[0]).toEqual({
      id: expect.any(String),
      eventType: "webhook.test",
      createdAt: expect.any(String),
      status: "pending",
      attempts: 0,
      lastAttemptAt: null,
      lastStatusCode: null,
      lastError: null,
      nextAttemptAt: expect.any(String),
    });
    const failed = await t.request({
      url: `/api/v1/webhooks/${id}/deliveries?status=failed`,
      key: KEYS.acme,
    });
    expect(failed.json()).toEqual({ page: 1, totalPages: 0, totalCount: 0, items: [] });
    const others = await t.request({ url: "/api/v1/webhooks", key: KEYS.acme });
    for (const other of others.json().items.filter((w: { id: string }) => w.id !== id)) {
      const log = await t.request({
        url: `/api/v1/webhooks/${other.id}/deliveries`,
        key: KEYS.acme,
      });
      expect(log.json().totalCount).toBe(0);
    }
    const deliveryId = page.items[0].id;
    const retry = await t.request({
      method: "POST",
      url: `/api/v1/webhooks/${id}/deliveries/${deliveryId}/retry`,
      key: KEYS.acme,
    });
    expect(retry.statusCode).toBe(202);
    const unknown = await t.request({
      method: "POST",
      url: `/api/v1/webhooks/${id}/deliveries/${id}/retry`,
      key: KEYS.acme,
    });
    expect(unknown.json()).toEqual({
      statusCode: 404,
      error: "Not Found",
      message: "Delivery not found",
    });
    // Clients that label every call JSON: an empty body is no body where none is taken.
    const labelled = { "content-type": "application/json", "content-length": "0" };
    // Without any length either, as `curl -X DELETE -H 'content-type: application/json'` sends.
    const unknownId = "00000000-0000-4000-8000-000000000000";
    const bare = await t.app.inject({
      method: "DELETE",
      url: `/api/v1/webhooks/${unknownId}`,
      headers: { authorization: KEYS.acme, "content-type": "application/json" },
    });
    expect(bare.json()).toEqual({
      statusCode: 404,
      error: "Not Found",
      message: "Webhook not found",
    });
    for (const [method, url, status] of [
      ["POST", `/api/v1/webhooks/${id}/test`, 202],
      ["POST", `/api/v1/webhooks/${id}/deliveries/${deliveryId}/retry`, 202],
    ] as const) {
      const response = await t.request({
        method,
        url,
        key: KEYS.acme,
        headers: labelled,
        payload: "",
      });
      expect(response.statusCode).toBe(status);
    }
    // Another endpoint, disabled: this delivery is not its own, which decides before its state.
    const other = (await create(KEYS.acme, { url: PUBLIC_URL, events: ["*"] })).json();
    const disable = await t.request({
      method: "PATCH",
      url: `/api/v1/webhooks/${other.id}`,
      key: KEYS.acme,
      payload: { disabled: true },
    });
    expect(disable.statusCode).toBe(200);
    const notItsOwn = await t.request({
      method: "POST",
      url: `/api/v1/webhooks/${other.id}/deliveries/${deliveryId}/retry`,
      key: KEYS.acme,
    });
    expect(notItsOwn.json()).toEqual({
      statusCode: 404,
      error: "Not Found",
      message: "Delivery not found",
    });
    const removed = await t.request({
      method: "DELETE",
      url: `/api/v1/webhooks/${other.id}`,
      key: KEYS.acme,
      headers: labelled,
      payload: "",
    });
    expect(removed.statusCode).toBe(204);
  });

  it("refuses a retry while an attempt of that delivery is being made (409)", async () => {
    const { id } = (await create(KEYS.acme, { url: PUBLIC_URL, events: ["*"] })).json();
    const test = await t.request({
      method: "POST",
      url: `/api/v1/webhooks/${id}/test`,
      key: KEYS.acme,
    });
    expect(test.statusCode).toBe(202);
    const log = await t.request({ url: `/api/v1/webhooks/${id}/deliveries`, key: KEYS.acme });
    const deliveryId = log.json().items[0].id;
    await t.database.db
      .updateTable("webhook_deliveries")
      .set({ claimed_until: new Date(Date.now() + 3_600_000) })
      .where("id", "=", deliveryId)
      .execute();
    const retry = await t.request({
      method: "POST",
      url: `/api/v1/webhooks/${id}/deliveries/${deliveryId}/retry`,
      key: KEYS.acme,
    });
    expect(retry.json()).toEqual({
      statusCode: 409,
      error: "Conflict",
      message: "An attempt of this delivery is in progress; retry after it",
    });
    await t.request({ method: "DELETE", url: `/api/v1/webhooks/${id}`, key: KEYS.acme });
  });

  it("on the routes that take no body, refuses one that is not JSON, malformed or too large, as documented", async () => {
    const { id } = (await create(KEYS.acme, { url: PUBLIC_URL, events: ["*"] })).json();
    const deliveryId = "00000000-0000-4000-8000-000000000000";
    const bodies = [
      [{ "content-type": "text/plain" }, "x", 415, "Unsupported Media Type: send application/json"],
      [{ "content-type": "application/json" }, "{x", 400, [{ message: "Malformed JSON body" }]],
      [{ "content-type": "application/json" }, " ".repeat(3 * 1024 * 1024), 413, undefined],
    ] as const;
    for (const [method, url] of [
      ["POST", `/api/v1/webhooks/${id}/test`],
      ["POST", `/api/v1/webhooks/${id}/deliveries/${deliveryId}/retry`],
      ["DELETE", `/api/v1/webhooks/${id}`],
    ] as const) {
      for (const [headers, payload, status, message] of bodies) {
        // t.request checks each answer against the operation's documented responses.
        const response = await t.request({ method, url, key: KEYS.acme, headers, payload });
        expect(response.statusCode, `${method} ${url}`).toBe(status);
        if (message !== undefined) expect(response.json().message).toEqual(message);
      }
    }
    const kept = await t.request({ url: `/api/v1/webhooks/${id}`, key: KEYS.acme });
    expect(kept.statusCode).toBe(200);
  });

  it("refuses a bad delivery-log query with 400s naming the parameter", async () => {
    const { id } = (await t.request({ url: "/api/v1/webhooks", key: KEYS.acme })).json().items[0];
    for (const [query, path] of [
      ["status=done", "status"],
      ["page=0", "page"],
      ["pageSize=501", "pageSize"],
    ]) {
      const response = await t.request({
        url: `/api/v1/webhooks/${id}/deliveries?${query}`,
        key: KEYS.acme,
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().message[0].path).toBe(path);
    }
  });

  it("refuses an endpoint over WEBHOOKS_PER_ORGANIZATION with a 409 that states the limit", async () => {
    const { items } = (await t.request({ url: "/api/v1/webhooks", key: KEYS.acme })).json();
    for (let i = items.length; i < 3; i++) {
      expect((await create(KEYS.acme, { url: PUBLIC_URL, events: ["*"] })).statusCode).toBe(201);
    }
    const over = await create(KEYS.acme, { url: PUBLIC_URL, events: ["*"] });
    expect(over.statusCode).toBe(409);
    expect(over.json()).toEqual({
      statusCode: 409,
      error: "Conflict",
      message:
        "An organization may have at most 3 webhooks (WEBHOOKS_PER_ORGANIZATION); delete one first",
    });
  });
});

describe("bad subscriptions are 400s and store nothing", () => {
  const bodies: [string, unknown, string][] = [
    ["no url", { events: ["*"] }, "url"],
    ["no events", { url: PUBLIC_URL }, "events"],
    ["empty events", { url: PUBLIC_URL, events: [] }, "events"],
    ["unknown event", { url: PUBLIC_URL, events: ["report.eaten"] }, "events.0"],
    ["a url that is none", { url: "not a url", events: ["*"] }, "url"],
    ["a url on port 0", { url: "https://93.184.215.14:0/hook", events: ["*"] }, "url"],
    [
      "a description too long",
      { url: PUBLIC_URL, events: ["*"], description: "x".repeat(501) },
      "description",
    ],
  ];
  for (const [name, body, path] of bodies) {
    it(`refuses ${name} (path ${path})`, async () => {
      const response = await create(KEYS.globex, body);
      expect(response.statusCode).toBe(400);
      expect(response.json().message.map((p: { path: string }) => p.path)).toContain(path);
    });
  }

  const targets: [string, string][] = [
    ["http://", "http://93.184.215.14/hook"],
    ["loopback", "https://127.0.0.1/hook"],
    ["a private address", "https://10.0.0.1/hook"],
    ["cloud metadata (link-local)", "https://169.254.169.254/latest/meta-data"],
    ["the unspecified address", "https://0.0.0.0/hook"],
    ["IPv6 loopback", "https://[::1]/hook"],
    ["IPv4-mapped IPv6 loopback", "https://[::ffff:127.0.0.1]/hook"],
    ["IPv6 unique local", "https://[fd00::1]/hook"],
    ["a name resolving to loopback", "https://localhost/hook"],
    ["credentials in the URL", "https://user:pw@93.184.215.14/hook"],
    ["an empty fragment", "https://93.184.215.14/hook#"],
    ["spaces around the URL", " https://93.184.215.14/hook "],
    ["a line break in the URL", "https://93.184.215.14/ho\nok"],
    ["a URL without //", "https:93.184.215.14/hook"],
  ];
  for (const [name, url] of targets) {
    it(`refuses ${name} as a target (SSRF), on create and on update`, async () => {
      const response = await create(KEYS.globex, { url, events: ["*"] });
      expect(response.statusCode).toBe(400);
      expect(response.json().message).toEqual([{ path: "url", message: expect.any(String) }]);
    });
  }

  it("refuses the same targets on update", async () => {
    const { id } = (await create(KEYS.globex, { url: PUBLIC_URL, events: ["*"] })).json();
    for (const [, url] of targets) {
      const response = await t.request({
        method: "PATCH",
        url: `/api/v1/webhooks/${id}`,
        key: KEYS.globex,
        payload: { url },
      });
      expect(response.statusCode, url).toBe(400);
      expect(response.json().message[0].path).toBe("url");
    }
    const shown = await t.request({ url: `/api/v1/webhooks/${id}`, key: KEYS.globex });
    expect(shown.json().url).toBe(PUBLIC_URL);
    await t.request({ method: "DELETE", url: `/api/v1/webhooks/${id}`, key: KEYS.globex });
  });

  it("stored none of the refused ones", async () => {
    const { items } = (await t.request({ url: "/api/v1/webhooks", key: KEYS.globex })).json();
    const stored = items.map((w: { url: string }) => w.url);
    for (const [, url] of targets) expect(stored).not.toContain(url);
    expect(stored).not.toContain("not a url");
  });

  it("answers 401 without a key", async () => {
    const response = await t.request({ url: "/api/v1/webhooks" });
    expect(response.statusCode).toBe(401);
  });
});
