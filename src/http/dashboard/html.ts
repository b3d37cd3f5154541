/**
 * HTML built in TypeScript: `html` escapes every interpolated value unless it is itself
 * `Html` (made by `html`), so a page cannot forget to escape. Templates are
 * plain functions, type-checked and compiled with the rest (no template files to ship).
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Interpolated = Html | string | number | boolean | null | undefined | readonly Interpolated[];

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

function render(value: Interpolated): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join("");
  if (value === null || value === undefined || value === false) return "";
  return escapeHtml(String(value));
}

/** `html\`<p>${name}</p>\``: `name` is escaped; arrays are joined; null, undefined, false vanish. */
export function html(strings: TemplateStringsArray, ...values: Interpolated[]): Html {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += render(values[i] as Interpolated) + strings[i + 1];
  return new Html(out);
}
