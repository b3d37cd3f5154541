import type { z } from "zod";

/**
 * A parser for the valid case, compiled from a Zod schema's own definition: it returns what
 * `schema.safeParse(input).data` returns when it can tell cheaply that the input is valid, and
 * undefined otherwise, leaving Zod to decide and to word the problems. Undefined is always
 * safe; a value is only returned when Zod would accept the input with that same value.
 *
 * Why: Zod runs every field through its full machinery (a payload and an issue list per
 * field, every check through its runner), a fifth of the server's CPU on ingest for records
 * that are nearly always valid. Like Zod's own object parser, the checks are compiled to one
 * function (`new Function`: keys as constants, no call per field); where code cannot be
 * generated, every input goes to Zod. Only the constructs the submission schemas use are
 * compiled; any other one throws when the parser is built, so a schema change cannot make the
 * two disagree silently (test/fuzz/fast-parse.test.ts checks them against Zod).
 */
export function fastParser<S extends z.ZodType>(
  schema: S,
): (input: unknown) => z.output<S> | undefined {
  const code = new Generator();
  const body = `${code.parse(schema, "input", "output")}\nreturn output;`;
  let parse: (input: unknown) => unknown;
  try {
    parse = new Function("refs", `return (input) => { let output;\n${body} };`)(code.refs);
  } catch {
    return () => undefined;
  }
  // Anything the generated code did not foresee (a refinement that throws, say) is Zod's to
  // judge and word: never an exception out of here.
  return (input) => {
    try {
      return parse(input) as z.output<S> | undefined;
    } catch {
      return undefined;
    }
  };
}

/** The parts of a Zod 4 schema read here (`schema._zod`). */
type Internals = {
  def: {
    type: string;
    checks?: { _zod: { def: CheckDef } }[];
    shape?: Record<string, z.ZodType>;
    catchall?: unknown;
    element?: z.ZodType;
    innerType?: z.ZodType;
    defaultValue?: unknown;
    coerce?: boolean;
  };
  /** The values an enum admits. */
  values?: ReadonlySet<unknown>;
  /** How a key of an object may be absent (Zod's own reading of the field). */
  optin?: "optional" | "defaulted";
  optout?: "optional";
};
type CheckDef = {
  check: string;
  minimum?: number;
  maximum?: number;
  value?: number;
  inclusive?: boolean;
  fn?: (value: unknown) => unknown;
};

const internals = (schema: z.ZodType): Internals => (schema as unknown as { _zod: Internals })._zod;

/** Writes statements that check `input` and set `output`, or return undefined (not vouched). */
class Generator {
  /** Values the code refers to: enum sets, defaults, refinements. */
  readonly refs: unknown[] = [];
  private names = 0;

  parse(schema: z.ZodType, input: string, output: string): string {
    const zod = internals(schema);
    const { def } = zod;
    if (def.coerce) unsupported(def.type, "coerce");
    const checks = (def.checks ?? []).map((c) => this.check(def.type, c._zod.def, output));
    return [this.type(zod, input, output), ...checks].join("\n");
  }

  private type(zod: Internals, input: string, output: string): string {
    const { def } = zod;
    switch (def.type) {
      case "object":
        return this.object(zod, input, output);
      case "array":
        return this.array(zod, input, output);
      case "unknown":
        return `${output} = ${input};`;
      case "string":
        return `if (typeof ${input} !== "string") return undefined;\n${output} = ${input};`;
      case "number":
        // Zod's number admits finite numbers only (no NaN, no Infinity).
        return `if (typeof ${input} !== "number" || !Number.isFinite(${input})) return undefined;\n${output} = ${input};`;
      case "enum":
        return `if (!${this.ref(required(zod.values, "enum values"))}.has(${input})) return undefined;\n${output} = ${input};`;
      case "optional": {
        const inner = required(def.innerType, "inner type");
        // Only a defaulted inner type has something to say about undefined.
        if (internals(inner).optin === "defaulted") return this.parse(inner, input, output);
        return `if (${input} === undefined) ${output} = undefined;\nelse {\n${this.parse(inner, input, output)}\n}`;
      }
      case "nullable":
        return `if (${input} === null) ${output} = null;\nelse {\n${this.parse(required(def.innerType, "inner type"), input, output)}\n}`;
      case "default": {
        // Zod substitutes the default for undefined without checking it, read from its
        // definition each time (a function default is called each time).
        const inner = this.parse(required(def.innerType, "inner type"), input, output);
        return `if (${input} === undefined) ${output} = ${this.ref(def)}.defaultValue;\nelse {\n${inner}\n}`;
      }
      default:
        return unsupported(def.type, "type");
    }
  }

  /**
   * Zod's object: a plain object (not an array), unknown keys dropped, the output's keys in
   * the shape's order; whether a key may be absent and whether it is then written follow each
   * field's `optin`/`optout`, as in Zod's own compiled object parser.
   */
  private object({ def }: Internals, input: string, output: string): string {
    if (def.catchall !== undefined) unsupported("object", "catchall");
    const lines = [
      `if (typeof ${input} !== "object" || ${input} === null || Array.isArray(${input})) return undefined;`,
      `${output} = {};`,
    ];
    for (const [key, schema] of Object.entries(required(def.shape, "shape"))) {
      if (key === "__proto__") unsupported("object", "__proto__ key");
      const [present, raw, value] = [this.name(), this.name(), this.name()];
      const k = JSON.stringify(key);
      const { optin, optout } = internals(schema);
      // A required key needs no presence test when its type refuses undefined anyway.
      const testPresence = optin === undefined && !refusesUndefined(schema);
      const keep =
        optin === undefined || (optin === "defaulted" && optout !== "optional")
          ? "true"
          : optin === "optional" && optout === "optional"
            ? present
            : `${present} || ${value} !== undefined`;
      if (testPresence || keep !== "true") lines.push(`const ${present} = ${k} in ${input};`);
      if (testPresence) lines.push(`if (!${present}) return undefined;`);
      // Read once, as Zod does (a getter could answer differently twice).
      lines.push(`const ${raw} = ${input}[${k}];`, `let ${value};`, this.parse(schema, raw, value));
      lines.push(
        keep === "true"
          ? `${output}[${k}] = ${value};`
          : `if (${keep}) ${output}[${k}] = ${value};`,
      );
    }
    return lines.join("\n");
  }

  private array({ def }: Internals, input: string, output: string): string {
    const [i, raw, value] = [this.name(), this.name(), this.name()];
    return [
      `if (!Array.isArray(${input})) return undefined;`,
      `${output} = new Array(${input}.length);`,
      `for (let ${i} = 0; ${i} < ${input}.length; ${i}++) {`,
      `const ${raw} = ${input}[${i}];`,
      `let ${value};`,
      this.parse(required(def.element, "element"), raw, value),
      `${output}[${i}] = ${value};`,
      "}",
    ].join("\n");
  }

  /**
   * A check on a value its type accepted. Zod counts a string's length in code points: at
   * most its UTF-16 length and at least half of it; a length these bounds cannot settle is
   * left to Zod.
   */
  private check(type: string, check: CheckDef, value: string): string {
    const refuse = (condition: string) => `if (${condition}) return undefined;`;
    switch (check.check) {
      case "min_length": {
        const min = required(check.minimum, "minimum");
        return refuse(`${value}.length < ${type === "string" ? 2 * min : min}`);
      }
      case "max_length":
        return refuse(`${value}.length > ${required(check.maximum, "maximum")}`);
      case "greater_than":
        return refuse(`!(${value} ${check.inclusive ? ">=" : ">"} ${limit(check.value)})`);
      case "less_than":
        return refuse(`!(${value} ${check.inclusive ? "<=" : "<"} ${limit(check.value)})`);
      case "custom": {
        // A refinement: Zod raises its issue when the result is falsy (a promise: not here).
        const result = this.name();
        const fn = this.ref(required(check.fn, "refinement"));
        return `const ${result} = (0, ${fn})(${value});\n${refuse(`${result} !== true && (!${result} || ${result} instanceof Promise)`)}`;
      }
      default:
        return unsupported(type, `check ${check.check}`);
    }
  }

  private ref(value: unknown): string {
    this.refs.push(value);
    return `refs[${this.refs.length - 1}]`;
  }

  private name(): string {
    this.names += 1;
    return `v${this.names}`;
  }
}

/** Whether the schema refuses undefined by its type alone (checks aside). */
function refusesUndefined(schema: z.ZodType): boolean {
  const { def } = internals(schema);
  if (def.type === "nullable") return refusesUndefined(required(def.innerType, "inner type"));
  return ["string", "number", "enum", "object", "array"].includes(def.type);
}

/** A number bound as source text (String() of a number reads back as the same number). */
function limit(value: unknown): string {
  if (typeof value !== "number") return unsupported("number", "non-number bound");
  return String(value);
}

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`fastParser: a schema without its ${what}`);
  return value;
}

function unsupported(type: string, what: string): never {
  throw new Error(`fastParser: ${what} of a ${type} schema is not supported: parse it with Zod`);
}
