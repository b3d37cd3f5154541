import { readdir, readFile } from "node:fs/promises";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ValidationError } from "../src/domain/errors.js";
import { loadFixture } from "../src/services/fixtures.js";
import { migrate } from "../src/store/migrate.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { emptyDatabase } from "./helpers/empty-database.js";
import { baseFixture, KEYS } from "./helpers/fixture.js";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const TABLES = [
  "api_keys",
  "coins",
  "engagements",
  "exchanges",
  "markets",
  "organizations",
  "reference_data_version",
  "report_versions",
  "reports",
  "schema_migrations",
  "submissions",
];
const LOADED = TABLES.filter((name) => !name.startsWith("report") && name !== "submissions");

async function snapshot() {
  const counts: Record<string, number> = {};
  for (const table of LOADED) {
    const r = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(
      t.database.db,
    );
    counts[table] = r.rows[0]?.n ?? -1;
  }
  const version = await sql<{ version: number }>`select version from reference_data_version`
    .execute(t.database.db)
    .then((r) => r.rows[0]?.version);
  return { counts, version };
}

/** Loads `input` and returns the ValidationError it must be refused with. */
async function refusal(input: unknown): Promise<ValidationError> {
  const error = await loadFixture(t.database.stores, input, new Date()).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ValidationError);
  return error as ValidationError;
}

const good = {
  coin: { id: "new-coin", symbol: "NEW", name: "New Coin" },
  exchange: { id: "new-exchange", name: "New", spot: true, derivatives: false, marketData: true },
  organization: {
    id: "initech",
    name: "Initech",
    apiKeys: ["initech-key-0123456789abcdef0123456789"],
    engagements: [{ baseCoinId: "chainlink", type: "project", since: "2024-01-01" }],
  },
};

describe("loading a fixture", () => {
  it("changes nothing when the same fixture is loaded again", async () => {
    const before = await snapshot();
    expect(before.counts).toMatchObject({
      coins: 6,
      exchanges: 5,
      markets: 4,
      organizations: 2,
      api_keys: 3,
      engagements: 4,
    });
    const summary = await loadFixture(t.database.stores, baseFixture(), new Date());
    expect(summary).toEqual({ changed: 0, eligibilityChanged: 0 });
    expect(await snapshot()).toEqual(before);
  });

  it("keeps a revoked key revoked and a live key live when loaded again", async () => {
    await loadFixture(t.database.stores, baseFixture(), new Date());
    const revoked = await t.request({
      method: "GET",
      url: "/api/v1/projects",
      key: KEYS.acmeRevoked,
    });
    const live = await t.request({ method: "GET", url: "/api/v1/projects", key: KEYS.acme });
    expect([revoked.statusCode, live.statusCode]).toEqual([401, 200]);
  });

  it("counts what a new fixture changes and bumps the reference data version once", async () => {
    const before = await snapshot();
    const summary = await loadFixture(
      t.database.stores,
      { coins: [good.coin], exchanges: [good.exchange], organizations: [good.organization] },
      new Date(),
    );
    expect(summary.changed).toBe(5); // coin, exchange, organization, key, engagement
    const after = await snapshot();
    expect(after.version).toBe((before.version ?? 0) + 1);
    expect(after.counts.coins).toBe((before.counts.coins ?? 0) + 1);
    const again = await loadFixture(
      t.database.stores,
      { coins: [good.coin], exchanges: [good.exchange], organizations: [good.organization] },
      new Date(),
    );
    expect(again.changed).toBe(0);
    expect(await snapshot()).toEqual(after);
    const key = await t.request({
      method: "GET",
      url: "/api/v1/projects",
      key: "initech-key-0123456789abcdef0123456789",
    });
    expect(key.statusCode).toBe(200);
  });
});

describe("refusing a malformed fixture", () => {
  // Each case mixes valid new entries with one bad entry: none of it may be stored.
  const cases: { name: string; fixture: Record<string, unknown>; path: string }[] = [
    {
      name: "a market on an unknown exchange",
      fixture: {
        coins: [{ id: "other", symbol: "OTH", name: "Other" }],
        markets: [
          {
            exchangeId: "nowhere",
            baseCoinId: "chainlink",
            quoteSymbol: "USD",
            instrumentType: "spot",
            collectedSince: "2024-01-01",
          },
        ],
      },
      path: "markets.0.exchangeId",
    },
    {
      name: "a duplicate coin",
      fixture: {
        coins: [
          { id: "other", symbol: "OTH", name: "Other" },
          { id: "dup", symbol: "D", name: "Dup" },
          { id: "dup", symbol: "D2", name: "Dup again" },
        ],
      },
      path: "coins.2",
    },
    {
      name: "an impossible date",
      fixture: {
        organizations: [
          {
            ...good.organization,
            engagements: [{ ...good.organization.engagements[0], since: "2024-02-30" }],
          },
        ],
      },
      path: "organizations.0.engagements.0.since",
    },
    {
      name: "a value of the wrong type",
      fixture: {
        coins: [good.coin],
        exchanges: [{ ...good.exchange, spot: "yes" }],
      },
      path: "exchanges.0.spot",
    },
    {
      name: "an engagement ending before it starts",
      fixture: {
        organizations: [
          {
            ...good.organization,
            engagements: [
              { baseCoinId: "chainlink", type: "prop", since: "2024-05-01", until: "2024-04-01" },
            ],
          },
        ],
      },
      path: "organizations.0.engagements.0.until",
    },
    {
      name: "a name PostgreSQL cannot store",
      fixture: { coins: [good.coin, { id: "nul", symbol: "N\u0000", name: "Nul" }] },
      path: "coins.1.symbol",
    },
    {
      name: "one API key listed twice",
      fixture: {
        organizations: [
          { ...good.organization, apiKeys: ["twice-key-0123456789abcdef0123456789"] },
          {
            id: "hooli",
            name: "Hooli",
            apiKeys: [{ key: "twice-key-0123456789abcdef0123456789", revoked: true }],
          },
        ],
      },
      path: "organizations.1.apiKeys.0",
    },
    {
      name: "an API key that belongs to another organization",
      fixture: {
        organizations: [{ id: "globex", name: "Globex Liquidity", apiKeys: [KEYS.acme] }],
      },
      path: "organizations.0.apiKeys.0",
    },
    {
      name: "an engagement for an unknown coin",
      fixture: {
        organizations: [
          {
            ...good.organization,
            engagements: [{ baseCoinId: "nope", type: "prop", since: "2024-05-01" }],
          },
        ],
      },
      path: "organizations.0.engagements.0.baseCoinId",
    },
    {
      name: "a spot market on an exchange without spot trading",
      fixture: {
        markets: [
          {
            exchangeId: "binance_futures",
            baseCoinId: "chainlink",
            quoteSymbol: "USDT",
            instrumentType: "spot",
            collectedSince: "2024-01-01",
          },
        ],
      },
      path: "markets.0.instrumentType",
    },
    {
      name: "a perp market on an exchange that the same fixture marks derivatives: false",
      fixture: {
        exchanges: [good.exchange],
        markets: [
          {
            exchangeId: good.exchange.id,
            baseCoinId: "chainlink",
            quoteSymbol: "USDT",
            instrumentType: "perp",
            collectedSince: "2024-01-01",
          },
        ],
      },
      path: "markets.0.instrumentType",
    },
    {
      name: "an exchange turned spot: false while spot markets are stored under it",
      fixture: {
        exchanges: [
          { id: "kraken", name: "Kraken", spot: false, derivatives: true, marketData: true },
        ],
      },
      path: "exchanges.0.spot",
    },
    {
      name: "two overlapping engagements of one organization for one coin",
      fixture: {
        organizations: [
          {
            ...good.organization,
            engagements: [
              { baseCoinId: "aave", type: "prop", since: "2024-01-01", until: "2024-06-30" },
              { baseCoinId: "aave", type: "project", since: "2024-06-30" },
            ],
          },
        ],
      },
      path: "organizations.0.engagements.1",
    },
    {
      name: "an engagement overlapping a stored one of the same organization",
      fixture: {
        organizations: [
          {
            id: "acme",
            name: "Acme Market Making",
            engagements: [{ baseCoinId: "chainlink", type: "prop", since: "2025-01-01" }],
          },
        ],
      },
      path: "organizations.0.engagements.0",
    },
  ];

  for (const c of cases) {
    it(`refuses ${c.name}, naming ${c.path}, and loads nothing`, async () => {
      const before = await snapshot();
      const error = await refusal(c.fixture);
      expect(error.problems.map((p) => p.path)).toContain(c.path);
      expect(error.message).toContain(c.path);
      expect(await snapshot()).toEqual(before);
    });
  }

  it("refuses an unknown top-level key, naming it, and loads nothing", async () => {
    const before = await snapshot();
    const error = await refusal({ coins: [good.coin], currencies: [] });
    expect(error.message).toContain("currencies");
    expect(await snapshot()).toEqual(before);
  });

  it("refuses a fixture that is not an object", async () => {
    for (const input of [null, [], "coins"]) {
      await refusal(input);
    }
  });

  it("reports every problem of the fixture at once", async () => {
    const error = await refusal({
      coins: [good.coin, good.coin],
      markets: [
        {
          exchangeId: "nowhere",
          baseCoinId: "nothing",
          quoteSymbol: "USD",
          instrumentType: "spot",
          collectedSince: "2024-01-01",
        },
      ],
    });
    expect(error.problems.map((p) => p.path)).toEqual([
      "coins.1",
      "markets.0.exchangeId",
      "markets.0.baseCoinId",
    ]);
  });

  it("reports malformed entries and broken references together", async () => {
    const error = await refusal({
      coins: [{ ...good.coin, symbol: 7 }],
      markets: [
        {
          exchangeId: "binance_futures",
          baseCoinId: "chainlink",
          quoteSymbol: "USDT",
          instrumentType: "spot",
          collectedSince: "2024-01-01",
        },
        { exchangeId: "kraken", baseCoinId: "chainlink" },
        {
          exchangeId: "kraken",
          baseCoinId: "nothing",
          quoteSymbol: "EUR",
          instrumentType: "spot",
          collectedSince: "2024-01-01",
        },
      ],
    });
    const paths = error.problems.map((p) => p.path);
    expect(paths).toContain("coins.0.symbol");
    expect(paths).toContain("markets.1.quoteSymbol");
    expect(paths).toContain("markets.0.instrumentType");
    expect(paths).toContain("markets.2.baseCoinId");
    const instrument = error.problems.find((p) => p.path === "markets.0.instrumentType");
    expect(instrument?.message).toBe(
      "spot market chainlink/USDT on exchange 'binance_futures', which does not support it (spot: false)",
    );
  });

  it("accepts back-to-back engagements and the same engagement loaded again", async () => {
    const engagements = [
      { baseCoinId: "aave", type: "prop", since: "2024-01-01", until: "2024-06-30" },
      { baseCoinId: "aave", type: "project", since: "2024-07-01" },
    ];
    const adjacent = { id: "adjacent", name: "Adjacent", engagements };
    const fixture = { organizations: [adjacent] };
    await loadFixture(t.database.stores, fixture, new Date());
    expect((await loadFixture(t.database.stores, fixture, new Date())).changed).toBe(0);
  });

  it("loads the bundled demo data", async () => {
    const demo = JSON.parse(
      await readFile(new URL("../demo/reference.json", import.meta.url), "utf8"),
    );
    await expect(loadFixture(t.database.stores, demo, new Date())).resolves.toBeDefined();
  });
});

describe("migrations", () => {
  it("create every table on an empty database and apply nothing when run again", async () => {
    const database = await emptyDatabase();
    try {
      const files = (await readdir(new URL("../migrations/", import.meta.url)))
        .filter((f) => f.endsWith(".sql"))
        .sort();
      expect(await migrate(database.db)).toEqual(files);
      // Every table the migrations declare, the service's own and nothing else.
      const declared = new Set(["schema_migrations", ...TABLES]);
      for (const file of files) {
        const text = await readFile(new URL(`../migrations/${file}`, import.meta.url), "utf8");
        for (const m of text.matchAll(/create (?:unlogged )?table (?:if not exists )?(\w+)/gi)) {
          declared.add(String(m[1]).toLowerCase());
        }
        for (const m of text.matchAll(/drop table (?:if exists )?(\w+)/gi)) {
          declared.delete(String(m[1]).toLowerCase());
        }
      }
      const tables = await sql<{ table_name: string }>`
        select table_name from information_schema.tables
        where table_schema = 'public' order by table_name`.execute(database.db);
      expect(tables.rows.map((r) => r.table_name)).toEqual([...declared].sort());
      expect(await migrate(database.db)).toEqual([]);
    } finally {
      await database.close();
    }
  });

  it("apply each file once when two runs start together", async () => {
    const database = await emptyDatabase();
    try {
      const [a, b] = await Promise.all([migrate(database.db), migrate(database.db)]);
      expect([...a, ...b].sort()).toEqual(a.length > 0 ? a : b);
      const applied = await sql<{
        n: number;
      }>`select count(*)::int as n from schema_migrations`.execute(database.db);
      expect(applied.rows[0]?.n).toBe(Math.max(a.length, b.length));
    } finally {
      await database.close();
    }
  });
});
