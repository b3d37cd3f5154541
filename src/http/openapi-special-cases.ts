/** Operations, as far as this module reads them. */
type Paths = Record<string, Record<string, { operationId?: string; requestBody?: unknown }>>;

/** The Content-Disposition of a scorecards CSV: its range in the file's name. */
const SCORECARDS_ATTACHMENT =
  '^attachment; filename="scorecards(-daily)?-\\d{4}-\\d{2}-\\d{2}-\\d{4}-\\d{2}-\\d{2}\\.csv"$';

/** The CSV answers are downloads: the export under one name, scorecards named by range. */
export const CSV_ATTACHMENTS = {
  "Content-Disposition": {
    description: 'A CSV answer is a download: `attachment; filename="reports.csv"`',
    schema: { type: "string", const: 'attachment; filename="reports.csv"' },
  },
  "Scorecards-Content-Disposition": {
    description:
      "A CSV answer is a download named after its range: `scorecards-2026-10-24-2026-11-22.csv` (`scorecards-daily-…` day by day)",
    schema: { type: "string", pattern: SCORECARDS_ATTACHMENT, maxLength: 70 },
  },
} as const;

/** Operations whose body may be left out (their schema accepts none). */
const OPTIONAL_BODIES = new Set(["rotateWebhookSecret"]);

/** The generator marks every body required; these operations' is not. */
export function markOptionalBodies(document: { paths: Paths }): void {
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations)) {
      const body = operation.requestBody as { required?: boolean } | undefined;
      if (OPTIONAL_BODIES.has(operation.operationId ?? "") && body) body.required = false;
    }
  }
}
