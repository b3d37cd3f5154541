import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { accountabilityFixture, READER_KEYS } from "./helpers/accountability.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Record } from "./helpers/fixture.js";
import { submitAll } from "./helpers/reports.js";
import { problemsOf } from "./helpers/submission.js";

/**
 * CONTRACT section 2: a page past the end is a 200 with no items, whatever its number; only
 * what is not a positive integer (or longer than 30 digits) is a 400.
 */
let t: TestApp;
const COUNT = 3; // reports, one a day
const LARGEST_ECHOED = "9007199254740991"; // 2^53 - 1

beforeAll(async () => {
  t = await startTestApp({ fixture: accountabilityFixture() });
  // Dated inside acme's engagement for chainlink, so that the project key reads them too.
  const dates = ["2025-03-01", "2025-03-02", "2025-03-03"];
  await submitAll(
    t,
    KEYS.acme,
    dates.map((date) => v2Record({ date })),
  );
});
afterAll(async () => t?.close());
afterEach(() => {
  vi.restoreAllMocks();
});

const KEYS_OF_EVERY_KIND = [
  ["a market maker", KEYS.acme],
  ["a project", READER_KEYS.chainlinkLabs],
  ["an operator", READER_KEYS.operator],
] as const;

function list(key: string, query: Record<string, string>, accept?: string) {
  return t.request({
    url: "/api/v1/reports",
    query,
    key,
    headers: accept === undefined ? {} : { accept },
  });
}

describe.each(KEYS_OF_EVERY_KIND)("a page past the end, for %s key", (_, key) => {
  it.each([
    ["1000000000", "500", "1000000000"],
    ["1000000000", "1", "1000000000"],
    [LARGEST_ECHOED, "500", LARGEST_ECHOED],
    ["9007199254740992", "1", LARGEST_ECHOED],
    [`1${"0".repeat(29)}`, "500", LARGEST_ECHOED],
    ["9".repeat(30), "7", LARGEST_ECHOED],
  ])("page=%s&pageSize=%s is a 200 with no items, as page %s", async (page, pageSize, echoed) => {
    const response = await list(key, { page, pageSize });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({
      page: Number(echoed),
      totalPages: Math.ceil(COUNT / Number(pageSize)),
      totalCount: COUNT,
      items: [],
    });
    expect(response.body).toContain(`"page":${echoed},`);
  });

  it("answers CSV with the header row only", async () => {
    for (const page of ["1000000000", "9".repeat(30)]) {
      const response = await list(key, { page }, "text/csv");
      expect(response.statusCode, response.body).toBe(200);
      expect(response.body.trim().split("\r\n")).toHaveLength(1);
      expect(response.body).toMatch(/^(organizationId,organizationName,)?date,exchangeId,/);
    }
    const whole = await list(key, { page: "1" }, "text/csv");
    expect(whole.body.trim().split("\r\n")).toHaveLength(COUNT + 1);
  });
});

describe("page numbers", () => {
  it("read leading zeros as the number they write", async () => {
    const response = await list(KEYS.acme, { page: `${"0".repeat(29)}1` });
    expect(response.json()).toMatchObject({ page: 1, totalCount: COUNT });
    expect(response.json().items).toHaveLength(COUNT);
  });

  it("never reach the database as an offset beyond 2^53 - 1", async () => {
    // A spy calls through: the listings answer as before, their offsets recorded.
    const spies = [
      vi.spyOn(t.database.stores.listing, "pageJson"),
      vi.spyOn(t.database.stores.scopedListing, "pageJson"),
    ];
    for (const [, key] of KEYS_OF_EVERY_KIND) {
      for (const accept of [undefined, "text/csv"]) {
        for (const page of [LARGEST_ECHOED, "18014398509481984", "9".repeat(30)]) {
          expect((await list(key, { page, pageSize: "500" }, accept)).statusCode).toBe(200);
        }
        expect((await list(key, { page: "2", pageSize: "2" }, accept)).statusCode).toBe(200);
      }
    }
    const offsets = spies.flatMap((spy) => spy.mock.calls.map((call) => call[2]));
    expect(offsets.length).toBeGreaterThan(0);
    for (const offset of offsets) {
      expect(Number.isSafeInteger(offset), String(offset)).toBe(true);
    }
  });

  it.each([
    ["0"],
    ["-1"],
    ["1.0"],
    ["+1"],
    [""],
    ["1e3"],
    [" 1"],
    ["0".repeat(30)],
    ["1".repeat(31)],
  ])("page=%j is a 400, Expected a positive integer", async (page) => {
    for (const [, key] of KEYS_OF_EVERY_KIND) {
      const response = await list(key, { page });
      expect(problemsOf(response)).toEqual([
        { path: "page", message: "Expected a positive integer" },
      ]);
    }
  });
});

describe("the OpenAPI document's page and pageSize", () => {
  /** What the document admits for a listing's query parameter: its pattern and maxLength. */
  async function documentAdmits(name: string): Promise<(value: string) => boolean> {
    const document = (await t.request({ url: "/openapi.json" })).json();
    const parameters: { name: string; schema: { pattern: string; maxLength: number } }[] =
      document.paths["/api/v1/reports"].get.parameters;
    const schema = parameters.find((p) => p.name === name)?.schema;
    if (schema === undefined) throw new Error(`no parameter ${name}`);
    return (value) => value.length <= schema.maxLength && new RegExp(schema.pattern).test(value);
  }

  it.each([
    [
      "page",
      ["1", "01", `${"0".repeat(29)}1`, "9".repeat(30)],
      ["0", "00", "-1", "1.0", "", "1".repeat(31)],
    ],
    ["pageSize", ["1", "007", "500", "000000500"], ["0", "000", "0000000001", "+1", " 1"]],
  ])("admit what the service answers and refuse what it refuses: %s", async (name, answered, refused) => {
    const admits = await documentAdmits(name);
    for (const value of answered) {
      expect((await list(KEYS.acme, { [name]: value })).statusCode, value).toBe(200);
      expect(admits(value), value).toBe(true);
    }
    for (const value of refused) {
      expect((await list(KEYS.acme, { [name]: value })).statusCode, value).toBe(400);
      expect(admits(value), value).toBe(false);
    }
  });
});
