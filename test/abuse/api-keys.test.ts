import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Fixture } from "../../src/schemas/fixture.js";
import { createOrganizationStore } from "../../src/store/organization-store.js";
import { type CliDatabase, cliDatabase } from "../helpers/cli.js";
import { freshDatabase } from "../helpers/database.js";
import { baseFixture } from "../helpers/fixture.js";

let cliDb: CliDatabase;
const cli = (...argv: string[]) => cliDb.cli(...argv);

const PARTNER_KEYS = [
  "partner-key-alpha-1-0123456789abcdef",
  "partner-key-beta-22-0123456789abcdef",
];

function seedFile(name: string, fixture: Fixture): string {
  const file = join(cliDb.dir, name);
  writeFileSync(file, JSON.stringify(fixture));
  return file;
}

beforeAll(async () => {
  cliDb = await cliDatabase("api-keys-");
  const fixture = baseFixture();
  fixture.organizations.push({
    id: "partner",
    name: "Partner",
    apiKeys: PARTNER_KEYS,
    engagements: [],
  });
  expect((await cliDb.seed(fixture)).code).toBe(0);
});

afterAll(() => cliDb.close());

type ListedKey = { id: string; prefix: string; label: string; revokedAt: string | null };
const listKeys = async (org: string): Promise<ListedKey[]> =>
  JSON.parse((await cli("key", "list", org, "--json")).out);

describe("API keys", () => {
  it("refuses a fixture key shorter than 32 characters, naming the entry, and loads nothing", async () => {
    const fixture: Fixture = {
      coins: [],
      exchanges: [],
      markets: [],
      organizations: [
        {
          id: "shorty",
          name: "Shorty",
          apiKeys: ["x".repeat(40), { key: "short-key-123" }],
          engagements: [],
        },
      ],
    };
    const result = await cli("seed", seedFile("short.json", fixture));
    expect(result.code).not.toBe(0);
    expect(result.err).toContain("organizations.0.apiKeys.1");
    expect(result.err).toContain("at least 32 characters");
    expect((await cli("key", "list", "shorty")).code).not.toBe(0);
  });

  it("stores no prefix for a fixture key, and lists every key with its id", async () => {
    const keys = await listKeys("partner");
    expect(keys).toHaveLength(2);
    for (const key of keys) {
      expect(key.prefix).toBe("");
      expect(key.id).toMatch(/^[0-9a-f-]{36}$/);
    }
    const table = (await cli("key", "list", "partner")).out;
    expect(table.split("\n")[0]).toMatch(/^ID\s+PREFIX\s+LABEL/);
    for (const key of keys) expect(table).toContain(key.id);
    for (const secret of PARTNER_KEYS) expect(table).not.toContain(secret.slice(0, 12));
  });

  it("revokes one key by a unique prefix of its id, and refuses an ambiguous prefix naming the candidates", async () => {
    const created = [
      JSON.parse((await cli("key", "create", "partner", "--label", "one", "--json")).out),
      JSON.parse((await cli("key", "create", "partner", "--label", "two", "--json")).out),
    ] as { id: string; prefix: string }[];
    // The two fixture keys shared the stored prefix `partner-key-`: it names nothing now.
    const old = await cli("key", "revoke", "partner", "partner-key-");
    expect(old.code).toBe(1);
    expect((await listKeys("partner")).filter((k) => k.revokedAt === null)).toHaveLength(4);
    // `trk_` names both generated keys: ambiguous, nothing revoked, both named.
    const ambiguous = await cli("key", "revoke", "partner", "trk_");
    expect(ambiguous.code).not.toBe(0);
    expect(ambiguous.err).toContain("matches 2 active keys");
    for (const key of created) expect(ambiguous.err).toContain(key.id);
    expect((await listKeys("partner")).filter((k) => k.revokedAt === null)).toHaveLength(4);
    // A unique start of an id revokes exactly that key.
    const [first, second] = created;
    if (first === undefined || second === undefined) throw new Error("keys not created");
    let length = 4;
    while (created.some((k) => k !== first && k.id.startsWith(first.id.slice(0, length)))) length++;
    const revoked = await cli("key", "revoke", "partner", first.id.slice(0, length), "--json");
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.out)).toEqual({ revoked: 1, id: first.id });
    const after = await listKeys("partner");
    expect(after.filter((k) => k.revokedAt !== null).map((k) => k.id)).toEqual([first.id]);
    // The full id, and the generated key's prefix, work too.
    expect((await cli("key", "revoke", "partner", second.prefix)).code).toBe(0);
    const fixtureKey = after.find((k) => k.prefix === "");
    if (fixtureKey === undefined) throw new Error("fixture key missing");
    expect((await cli("key", "revoke", "partner", fixtureKey.id)).code).toBe(0);
    expect((await listKeys("partner")).filter((k) => k.revokedAt === null)).toHaveLength(1);
  });
});

describe("migration 005", () => {
  it("clears the stored prefix of every key that is not a generated trk_ key", async () => {
    const database = await freshDatabase();
    try {
      const db = database.db;
      const organizations = createOrganizationStore(db);
      await organizations.upsertOrganization("legacy", "Legacy");
      for (const [hash, prefix] of [
        ["a".repeat(64), "partner-key-"],
        ["b".repeat(64), "trk_AbCdEfGh"],
      ] as const)
        await organizations.addApiKey({ organizationId: "legacy", hash, prefix, label: "" });
      const migration = readFileSync(
        new URL("../../migrations/005_api_key_prefix_generated_only.sql", import.meta.url),
        "utf8",
      );
      await sql.raw(migration).execute(db);
      const prefixes = (await organizations.apiKeys("legacy")).map((k) => k.prefix).sort();
      expect(prefixes).toEqual(["", "trk_AbCdEfGh"]);
    } finally {
      await database.close();
    }
  });
});
