import { z } from "zod";
import { MIN_PEERS, REPORT_CARD_RATES, type ReportCardRate } from "../domain/report-card.js";
import { MAX_ID_LENGTH, storedText, wholeNumber } from "./text.js";

const MONTH = /^[0-9]{4}-(0[1-9]|1[0-2])$/;
const MONTH_LENGTH = "YYYY-MM".length;

export const reportCardQuerySchema = z.object({
  month: z
    .string()
    .regex(MONTH, "Invalid month, expected YYYY-MM")
    .meta({
      maxLength: MONTH_LENGTH,
      description:
        "The calendar month (UTC), YYYY-MM, from 2000-01 and not in the future; default the last complete month",
      example: "2026-10",
    })
    .optional(),
});
export type ReportCardQuery = z.infer<typeof reportCardQuerySchema>;

const RATE_DESCRIPTIONS: Record<ReportCardRate, string> = {
  rejectedSubmissions: "rejectedSubmissions / submissions",
  rejectedRecords: "recordsRejected / (recordsAccepted + recordsRejected)",
  missingReports: "reportsMissing / reportsDue",
  lateReports: "reportsLate / reportsDue",
  correctionsAfterDeadline:
    "correctionsAfterDeadline / reports dated in the month (above 1 when reports are corrected more than once)",
};

const share = z.number().min(0).max(1);
// Versions over reports: a report corrected twice after its deadline counts twice.
const perReport = z.number().min(0);
const rateSchema = (rate: ReportCardRate) => {
  const ratio = rate === "correctionsAfterDeadline" ? perReport : share;
  return z
    .object({
      value: ratio.nullable().meta({ description: "Null when there is nothing to divide by" }),
      peerMedian: ratio.nullable().meta({
        description: `The median of the market makers reporting that month (the caller included); null when fewer than ${MIN_PEERS} of them have the rate`,
      }),
    })
    .meta({ description: RATE_DESCRIPTIONS[rate] });
};

const count = (description: string) => wholeNumber().meta({ description });
const counts = (description: string) =>
  z.record(storedText(MAX_ID_LENGTH), wholeNumber()).meta({ description });

export const reportCardSchema = z
  .object({
    organizationId: storedText(MAX_ID_LENGTH),
    month: storedText(MONTH_LENGTH).meta({ description: "YYYY-MM" }),
    submissions: count(
      "Submissions received in the month (dry runs and 409s of a batch in progress not counted)",
    ),
    rejectedSubmissions: count("Of them, rejected"),
    recordsAccepted: count("Records of the accepted submissions"),
    recordsRejected: count("Records of the rejected submissions (a batch is refused whole)"),
    problemsByCode: counts(
      "Problems of the rejected submissions, by code (all, not only the stored ones)",
    ),
    problemsByField: counts(
      "The same problems by field: the record field, `record` (duplicates), `data` (batch size), a header, or `body`",
    ),
    reportsDue: count("Obligation market-days of the month whose deadline has passed"),
    reportsMissing: count("Of them, with no report"),
    reportsLate: count("Of them, whose first report arrived after the deadline"),
    correctionsAfterDeadline: count(
      "Versions of reports dated in the month, after the first, recorded after the day's deadline",
    ),
    qualityFlags: counts(
      "Stored versions of reports dated in the month with each data-quality flag (CONTRACT section 6), as flagged when stored; flags no version has are left out",
    ),
    rates: z.object(
      Object.fromEntries(REPORT_CARD_RATES.map((r) => [r, rateSchema(r)])) as {
        [K in ReportCardRate]: ReturnType<typeof rateSchema>;
      },
    ),
    peers: z.object({
      marketMakers: count(
        "Market makers reporting that month: with a submission received or a report due in it",
      ),
      mediansShown: z.boolean().meta({
        description: `False when fewer than ${MIN_PEERS} market makers report that month: every peerMedian is then null, so that no other organization's figures can be inferred`,
      }),
      note: storedText(300).nullable(),
    }),
  })
  .meta({ id: "ReportCard" });
export type ReportCard = z.infer<typeof reportCardSchema>;
