import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { FastifyInstance } from "fastify";
import { KPI_NAMES } from "../../src/domain/obligation.js";

type Schema = Record<string, unknown>;
type Header = { schema?: Schema; $ref?: string };
type Response = {
  $ref?: string;
  headers?: Record<string, Header>;
  content?: Record<string, { schema?: Schema }>;
};
type Operation = { responses?: Record<string, Response> };
type Document = {
  paths: Record<string, Record<string, Operation>>;
  components?: { responses?: Record<string, Response>; headers?: Record<string, Header> };
};

/** Headers of the transport, not of the API: Node and Fastify add them to every answer. */
const TRANSPORT_HEADERS = new Set([
  "content-length",
  "content-type",
  "date",
  "connection",
  "keep-alive",
  "transfer-encoding",
]);

/** One answer as the service sent it. */
export type Answer = {
  method: string;
  url: string;
  statusCode: number;
  headers: Record<string, unknown>;
  /** The body as text, or undefined when it was a stream (a CSV export). */
  body: string | undefined;
};

/**
 * Checks answers against the OpenAPI document the app generates: the status is listed for the
 * operation, every header is documented (and valid), the content type is documented and the
 * body is valid against its schema (`additionalProperties: false` makes an undocumented field
 * a violation); a CSV's header row is the documented columns. Requests that name no documented
 * operation (`/`, `/docs`, an unknown route, a HEAD) are not checked.
 */
export class Conformance {
  readonly violations: string[] = [];
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly templates: { pattern: RegExp; path: string }[];

  constructor(private readonly document: Document) {
    addFormats.default(this.ajv);
    this.ajv.addSchema(document as object, DOC);
    this.templates = Object.keys(document.paths).map((path) => ({
      path,
      pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`),
    }));
  }

  /** The violations of one answer (also kept in `violations`). */
  check(answer: Answer): string[] {
    const found = this.problems(answer).map(
      (p) => `${answer.method} ${answer.url} -> ${answer.statusCode}: ${p}`,
    );
    this.violations.push(...found);
    return found;
  }

  private problems(answer: Answer): string[] {
    const path = answer.url.split("?")[0] ?? "";
    const template = this.templates.find((t) => t.pattern.test(path))?.path;
    const method = answer.method.toLowerCase();
    const operation = template === undefined ? undefined : this.document.paths[template]?.[method];
    if (template === undefined || operation === undefined) return [];
    const at = `#/paths/${pointerSegment(template)}/${method}/responses`;
    const status = String(answer.statusCode);
    const declared = operation.responses?.[status];
    if (declared === undefined) return [`status ${status} is not documented`];
    const { response, pointer } = this.resolve(declared, `${at}/${status}`);
    return [
      ...this.headerProblems(answer, response),
      ...this.bodyProblems(answer, response, pointer),
    ];
  }

  private headerProblems(answer: Answer, response: Response): string[] {
    const documented = new Map(
      Object.entries(response.headers ?? {}).map(([name, header]) => [
        name.toLowerCase(),
        this.header(header),
      ]),
    );
    const problems: string[] = [];
    for (const [name, value] of Object.entries(answer.headers)) {
      if (TRANSPORT_HEADERS.has(name.toLowerCase())) continue;
      const header = documented.get(name.toLowerCase());
      if (header === undefined) {
        problems.push(`header ${name} is not documented`);
        continue;
      }
      const text = String(value);
      const typed = header.schema?.type === "integer" ? Number(text) : text;
      const valid = this.ajv.validate(header.schema ?? {}, typed);
      if (!valid) problems.push(`header ${name}: ${text} ${this.ajv.errorsText()}`);
    }
    return problems;
  }

  private bodyProblems(answer: Answer, response: Response, pointer: string): string[] {
    const contentType = String(answer.headers["content-type"] ?? "");
    const mediaType = contentType.split(";")[0]?.trim() ?? "";
    if (answer.body === "" && response.content === undefined) return [];
    const media = response.content?.[mediaType];
    if (media === undefined) return [`content type ${contentType || "(none)"} is not documented`];
    if (answer.body === undefined) return [];
    if (mediaType === "text/csv") return csvProblems(answer.body, media.schema ?? {});
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      return [`body is not JSON: ${answer.body.slice(0, 100)}`];
    }
    const validate = this.validator(`${pointer}/content/${pointerSegment(mediaType)}/schema`);
    if (validate(body)) return [];
    return [`body ${this.ajv.errorsText(validate.errors)}: ${answer.body.slice(0, 300)}`];
  }

  /** A response, following a `$ref` to the components; and where it is in the document. */
  private resolve(response: Response, pointer: string): { response: Response; pointer: string } {
    if (response.$ref === undefined) return { response, pointer };
    const name = response.$ref.split("/").pop() ?? "";
    const target = this.document.components?.responses?.[name];
    if (target === undefined) throw new Error(`unresolved ${response.$ref}`);
    return { response: target, pointer: response.$ref };
  }

  private header(header: Header): Header {
    if (header.$ref === undefined) return header;
    return this.document.components?.headers?.[header.$ref.split("/").pop() ?? ""] ?? header;
  }

  private validator(pointer: string): ValidateFunction {
    let validate = this.compiled.get(pointer);
    if (validate === undefined) {
      validate = this.ajv.compile({ $ref: `${DOC}${pointer}` });
      this.compiled.set(pointer, validate);
    }
    return validate;
  }
}

const DOC = "openapi.json";

const pointerSegment = (segment: string) => segment.replaceAll("~", "~0").replaceAll("/", "~1");

/**
 * A CSV's header row must be the columns its schema's description lists, after the leading
 * columns it documents for some callers (project and operator keys), if any.
 */
function csvProblems(body: string, schema: Schema): string[] {
  const description = String(schema.description ?? "");
  // A list ends at a period that ends a sentence: column names may hold one (`a.b`).
  const listed = /Columns: (.+?)\.(?:\s|$)/.exec(description)?.[1];
  if (listed === undefined) return ["CSV columns are not documented"];
  const leading = /Leading columns of [^:]+: ([^.]+)\./.exec(description)?.[1];
  const header = body.split("\r\n")[0] ?? "";
  const expected = listed.split(", ").join(",");
  const allowed = [expected];
  if (leading !== undefined) allowed.push(`${leading.split(", ").join(",")},${expected}`);
  const trailing = /Trailing column with [^:]+: ([^.]+)\./.exec(description)?.[1];
  if (trailing !== undefined) allowed.push(...allowed.map((columns) => `${columns},${trailing}`));
  if (allowed.includes(header)) return [];
  if (/Then two for each KPI/.test(description) && kpiPairsFollow(header, expected)) return [];
  return [`CSV header row ${header} is not ${expected}`];
}

/** `header` is `columns` then `<kpi>.daysMet,<kpi>.daysMissed` for KPIs in catalogue order. */
function kpiPairsFollow(header: string, columns: string): boolean {
  if (!header.startsWith(`${columns},`)) return false;
  const rest = header.slice(columns.length + 1).split(",");
  const kpis = rest.filter((_, i) => i % 2 === 0).map((name) => name.replace(/\.daysMet$/, ""));
  const inOrder = KPI_NAMES.filter((kpi) => kpis.includes(kpi));
  return (
    rest.length % 2 === 0 &&
    rest.join(",") === inOrder.map((k) => `${k}.daysMet,${k}.daysMissed`).join(",")
  );
}

export type AnswerChecks = {
  /** Every violation found so far. */
  violations(): string[];
  /** Checks one whole answer (a CSV export's rows, which the hook cannot see). */
  check(answer: Answer): string[];
};

/**
 * Checks every answer of the app against its own OpenAPI document, in an `onSend` hook: in
 * process (`inject`) and over a real socket alike. A streamed body (a CSV export) is checked
 * there by its status, headers and content type; `check` checks the whole answer.
 */
export function checkAnswersOf(app: FastifyInstance): AnswerChecks {
  let conformance: Conformance | undefined;
  const checker = () => {
    conformance ??= new Conformance(app.swagger() as unknown as Document);
    return conformance;
  };
  app.addHook("onSend", async (request, reply, payload) => {
    checker().check({
      method: request.method,
      url: request.url,
      statusCode: reply.statusCode,
      headers: reply.getHeaders(),
      body: textOf(payload),
    });
    return payload;
  });
  return { violations: () => conformance?.violations ?? [], check: (a) => checker().check(a) };
}

/** A payload as text; undefined for a stream. */
function textOf(payload: unknown): string | undefined {
  if (typeof payload === "string") return payload;
  if (Buffer.isBuffer(payload)) return payload.toString("utf8");
  return payload == null ? "" : undefined;
}
