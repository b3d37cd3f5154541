import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliDatabase, cliDatabase } from "./helpers/cli.js";
import { baseFixture } from "./helpers/fixture.js";

/** `trading-reports webhook list|create|delete ORG …`: the operator's side of CONTRACT 7. */
let cliDb: CliDatabase;
const cli = (...argv: string[]) => cliDb.cli(...argv);
const URL = "https://93.184.215.14/hooks";

beforeAll(async () => {
  cliDb = await cliDatabase("webhook-cli-");
  expect((await cliDb.seed(baseFixture())).code).toBe(0);
});
afterAll(() => cliDb.close());

describe("webhook commands", () => {
  it("rotates a secret: the new one printed once, the replaced one's end said", async () => {
    const created = JSON.parse((await cli("webhook", "create", "acme", URL, "--json")).out);
    const rotated = await cli("webhook", "rotate-secret", "acme", created.id);
    expect(rotated).toMatchObject({ code: 0, err: "" });
    const [, id, secret, until] =
      /^rotated the secret of webhook (\S+)\nsecret: (whsec_\S+)\n\(shown once: store it now\)\nthe replaced secret also signs deliveries until (\S+)\n$/.exec(
        rotated.out,
      ) ?? [];
    expect(id).toBe(created.id);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secret).not.toBe(created.secret);
    expect(Date.parse(until ?? "") - Date.now()).toBeGreaterThan(86_000_000);
    const now = await cli(
      "webhook",
      "rotate-secret",
      "acme",
      created.id,
      "--previous-valid-for",
      "0",
    );
    expect(now.out).toMatch(/\nthe replaced secret signs nothing more\n$/);
    const json = JSON.parse(
      (
        await cli(
          "webhook",
          "rotate-secret",
          "acme",
          created.id,
          "--previous-valid-for",
          "60",
          "--json",
        )
      ).out,
    );
    expect(Object.keys(json)).toEqual(["id", "secret", "previousSecretExpiresAt"]);
    const bad = await cli(
      "webhook",
      "rotate-secret",
      "acme",
      created.id,
      "--previous-valid-for",
      "1w",
    );
    expect(bad.code).toBe(2);
    expect(bad.err).toBe(
      "error: --previous-valid-for: expected a whole number of seconds (0 to 604800), not '1w'\n",
    );
    const long = await cli(
      "webhook",
      "rotate-secret",
      "acme",
      created.id,
      "--previous-valid-for",
      "604801",
    );
    expect(long.code).toBe(1);
    expect(long.err).toBe(
      "error: --previous-valid-for: Number must be less than or equal to 604800\n",
    );
    const other = await cli("webhook", "rotate-secret", "globex", created.id);
    expect(other.code).not.toBe(0);
    expect(other.err).toContain("Webhook not found");
    await cli("webhook", "delete", "acme", created.id);
  });

  it("creates an endpoint (secret printed once), lists it without the secret, deletes it", async () => {
    const created = await cli(
      "webhook",
      "create",
      "acme",
      URL,
      "--event",
      "kpi.missed",
      "--event",
      "report.missing",
      "--description",
      "ops",
    );
    expect(created).toMatchObject({ code: 0, err: "" });
    const [, id, secret] =
      /^created webhook (\S+) -> \S+\nsecret: (whsec_\S+)\n\(shown once: store it now\)\n$/.exec(
        created.out,
      ) ?? [];
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const listed = JSON.parse((await cli("webhook", "list", "acme", "--json")).out);
    expect(listed).toEqual([
      {
        id,
        url: URL,
        events: ["kpi.missed", "report.missing"],
        description: "ops",
        disabled: false,
        createdAt: expect.any(String),
      },
    ]);
    const table = await cli("webhook", "list", "acme");
    expect(table.out.split("\n")[1]?.split(/\s+/)).toEqual([
      id,
      URL,
      "kpi.missed,report.missing",
      "false",
      "ops",
    ]);
    expect(table.out).not.toContain("whsec_");
    expect(await cli("webhook", "list", "globex")).toMatchObject({
      code: 0,
      out: "ID  URL  EVENTS  DISABLED  DESCRIPTION\n",
    });
    expect(await cli("webhook", "delete", "globex", id ?? "")).toMatchObject({
      code: 1,
      err: "error: Webhook not found\n",
    });
    expect(await cli("webhook", "delete", "acme", id ?? "")).toMatchObject({
      code: 0,
      out: `deleted webhook ${id}\n`,
    });
    expect(JSON.parse((await cli("webhook", "list", "acme", "--json")).out)).toEqual([]);
  });

  it("subscribes to every event by default", async () => {
    const created = JSON.parse((await cli("webhook", "create", "globex", URL, "--json")).out);
    expect(created.events).toEqual(["*"]);
    expect(created.secret).toMatch(/^whsec_/);
  });

  it("refuses unsafe targets, unknown events and unknown organizations", async () => {
    expect(await cli("webhook", "create", "acme", "http://93.184.215.14/")).toMatchObject({
      code: 1,
      err: "error: url: URL must use https\n",
    });
    expect(await cli("webhook", "create", "acme", "https://169.254.169.254/")).toMatchObject({
      code: 1,
      err: "error: url: 169.254.169.254 is not a public address\n",
    });
    const unknownEvent = await cli("webhook", "create", "acme", URL, "--event", "nope");
    expect(unknownEvent.code).toBe(1);
    expect(unknownEvent.err).toMatch(/^error: events\.0: /);
    expect(await cli("webhook", "list", "nobody")).toMatchObject({
      code: 1,
      err: "error: organization 'nobody' does not exist\n",
    });
  });
});
