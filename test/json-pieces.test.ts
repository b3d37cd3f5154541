import fc from "fast-check";
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { parseDataArrayInPieces } from "../src/http/json-pieces.js";
import { acceptUtf8JsonOnly } from "../src/http/request-bodies.js";

const parseOrUndefined = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};
const inPieces = (body: string, pieceBytes: number) =>
  parseDataArrayInPieces(Buffer.from(body), parseOrUndefined, pieceBytes);

/** Element texts that hold what a cut could be fooled by: `},` inside strings and nested values. */
const trickyElement = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom(
    { a: "},{" },
    { a: '"},{"b":1' },
    { a: "\\},", b: "x\\" },
    { nested: [{ x: 1 }, { y: 2 }], z: { w: {} } },
    [{}, {}],
    { "é€😀": "},\u0000" },
  ),
);

describe("a body parsed in pieces", () => {
  it("is the whole body's value whenever the pieces stand in, and they do for arrays of records", () => {
    fc.assert(
      fc.property(
        fc.array(trickyElement, { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 80 }),
        (data, pieceBytes) => {
          const body = JSON.stringify({ data });
          const parsed = inPieces(body, pieceBytes);
          if (parsed !== undefined) expect(parsed).toEqual(JSON.parse(body));
        },
      ),
      { numRuns: 2000 },
    );
    const records = Array.from({ length: 50 }, (_, i) => ({ date: "2025-01-01", bidDepth10: i }));
    const body = JSON.stringify({ data: records });
    expect(inPieces(body, 100)).toEqual({ data: records });
  });

  it("never stands in for a body the whole parse refuses or reads otherwise", () => {
    const mutated = fc
      .tuple(
        fc.array(trickyElement, { minLength: 1, maxLength: 12 }),
        fc.nat(),
        fc.constantFrom("", ",", "]", "}", "[", "{", '"', "\\", " ", "1"),
        fc.integer({ min: 1, max: 40 }),
      )
      .map(([data, at, insert, pieceBytes]) => {
        const body = JSON.stringify({ data });
        const cut = at % body.length;
        return { body: body.slice(0, cut) + insert + body.slice(cut + 1), pieceBytes };
      });
    let standIns = 0;
    fc.assert(
      fc.property(mutated, ({ body, pieceBytes }) => {
        const parsed = inPieces(body, pieceBytes);
        if (parsed === undefined) return;
        standIns++;
        // As the server reads it: bytes (a lone surrogate left by the mutation becomes U+FFFD).
        expect(parsed).toEqual(JSON.parse(Buffer.from(body).toString("utf8")));
      }),
      { numRuns: 5000 },
    );
    expect(standIns).toBeGreaterThan(100); // mutations that keep the JSON valid (a space, say)
  });

  it.each([
    ["other keys after data", '{"data":[{"a":1},{"b":2}],"x":[{"c":3},{"d":4}]}'],
    ["data twice", '{"data":[{"a":1},{"b":2}],"data":[{"c":3},{"d":4}]}'],
    ["a trailing comma", '{"data":[{"a":1},{"b":2},]}'],
    ["a leading comma", '{"data":[,{"a":1},{"b":2}]}'],
    ["an empty array", '{"data":[]}'],
    ["a space before data", '{ "data":[{"a":1},{"b":2}]}'],
    ["a byte-order mark", '\ufeff{"data":[{"a":1},{"b":2}]}'],
    ["nothing after the bracket", '{"data":[{"a":1},{"b":2}]'],
  ])("leaves a body with %s to the whole parse", (_what, body) => {
    expect(inPieces(body, 1)).toBeUndefined();
  });

  it("keeps trailing whitespace and every element, in order", () => {
    const body = '{"data":[{"a":1},{"b":[2]} , {"c":"3"},\n{"d":{"e":null}}]}\n\r\t ';
    expect(inPieces(body, 1)).toEqual(JSON.parse(body));
  });

  it("leaves a cut that would fall inside a string or a nested value to the whole parse", () => {
    expect(inPieces('{"data":[{"a":1},{"b":"},{"},{"c":3}]}', 1)).toBeUndefined();
    expect(inPieces('{"data":[{"a":1},{"b":[{"x":1},{"y":2}]}]}', 1)).toBeUndefined();
  });

  it("drops __proto__ and constructor.prototype keys as the server's parser does on the whole body", () => {
    const serverParser = Fastify().getDefaultJsonParser("remove", "remove");
    const parse = (text: string): unknown => {
      let parsed: unknown;
      serverParser({} as never, text, (error, value) => {
        if (error === null) parsed = value;
      });
      return parsed;
    };
    const poisoned = fc.constantFrom(
      '{"__proto__":{"x":1},"a":1}',
      '{"\\u005f_proto__":{"x":1}}',
      '{"constructor":{"prototype":{"x":1}},"b":2}',
      '{"constructor":{"other":1}}',
      '{"a":[{"__proto__":{"y":2}}]}',
      '{"note":"},{\\"__proto__\\":1},"}',
      '{"c":3}',
    );
    fc.assert(
      fc.property(
        fc.array(poisoned, { minLength: 1, maxLength: 10 }),
        fc.integer({ min: 1, max: 60 }),
        (elements, pieceBytes) => {
          const body = `{"data":[${elements.join(",")}]}`;
          const whole = parse(body) as { data: object[] };
          const pieces = parseDataArrayInPieces(Buffer.from(body), parse, pieceBytes);
          if (pieces === undefined) return;
          expect(pieces).toEqual(whole);
          const ownProto = (elements: object[]) =>
            elements.map((e) => Object.hasOwn(e, "__proto__"));
          expect(ownProto(pieces.data as object[])).toEqual(ownProto(whole.data));
        },
      ),
      { numRuns: 500 },
    );
    const body = '{"data":[{"__proto__":1,"a":1},{"constructor":{"prototype":1}}]}';
    const pieces = parseDataArrayInPieces(Buffer.from(body), parse, 1);
    expect(pieces).toEqual({ data: [{ a: 1 }, {}] });
    expect(Object.hasOwn(pieces?.data[0] as object, "__proto__")).toBe(false);
  });

  it("keeps elements that are arrays as arrays, whatever the number of pieces", () => {
    const body = '{"data":[[1,[2]],{"a":1},[3],{"b":[4]},[]]}';
    for (const pieceBytes of [1, 5, 1000])
      expect(inPieces(body, pieceBytes)).toEqual(JSON.parse(body));
  });

  it("a server body over 120 KiB drops every __proto__ key, in whichever piece it falls", async () => {
    const app = Fastify();
    acceptUtf8JsonOnly(app);
    app.post("/echo", async (request) =>
      (request.body as { data: object[] }).data.map((e) => Object.hasOwn(e, "__proto__")),
    );
    const padding = "x".repeat(600);
    const elements = Array.from({ length: 400 }, (_, i) => `{"__proto__":${i},"p":"${padding}"}`);
    const payload = `{"data":[${elements.join(",")}]}`;
    expect(payload.length).toBeGreaterThan(120 * 1024);
    const response = await app.inject({
      method: "POST",
      url: "/echo",
      headers: { "content-type": "application/json" },
      payload,
    });
    expect(response.json()).toEqual(elements.map(() => false));
    await app.close();
  });
});
