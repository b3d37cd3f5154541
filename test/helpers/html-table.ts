const ENTITIES: Record<string, string> = {
  "&#39;": "'",
  "&quot;": '"',
  "&lt;": "<",
  "&gt;": ">",
  "&amp;": "&",
};

/**
 * The body rows of the HTML table captioned `caption` (the caption's text up to its end), each
 * as its cells' text joined by " | ": what a reader of the page sees, tags and entities undone.
 */
export function tableRows(body: string, caption: string): string[] {
  const table = body.split("<table").find((t) => t.includes(`<caption>${caption}</caption>`)) ?? "";
  const tbody = table.split("<tbody>")[1]?.split("</tbody>")[0] ?? "";
  return [...tbody.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...(row[1] ?? "").matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)]
      .map((cell) =>
        (cell[1] ?? "")
          .replace(/<[^>]+>/g, "")
          .replace(/&#39;|&quot;|&lt;|&gt;|&amp;/g, (e) => ENTITIES[e] ?? e)
          .replace(/\s+/g, " ")
          .trim(),
      )
      .join(" | "),
  );
}
