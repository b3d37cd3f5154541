import type {
  SubmissionDetail,
  SubmissionPage,
  SubmissionsQuery,
} from "../../../schemas/submissions.js";
import { type Html, html } from "../html.js";
import { tableRegion } from "../views/table-region.js";
import { emptyNote, pager, pageSizeOptions } from "./list-parts.js";

type Item = SubmissionPage["items"][number];

export const SUBMISSIONS_PAGE_SIZE = 50;
const STATUSES = [
  { id: "accepted", label: "Accepted" },
  { id: "rejected", label: "Rejected" },
];

/** `2025-03-02 08:00:00 UTC`: the second a submission was received. */
const utcSecond = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
const count = (n: number) => n.toLocaleString("en-US");
const yesNo = (value: boolean) => (value ? "Yes" : "No");

function statusCell(status: Item["status"]): Html {
  return status === "accepted"
    ? html`<span class="status-submitted">Accepted</span>`
    : html`<span class="status-missed">Rejected</span>`;
}

function filterForm(query: SubmissionsQuery): Html {
  const pageSize = query.pageSize ?? SUBMISSIONS_PAGE_SIZE;
  return html`<form method="get" action="/app/submissions" class="filters" aria-label="Filters">
<label>Status<select name="status">
<option value="">All</option>
${STATUSES.map((s) => html`<option value="${s.id}"${s.id === query.status ? html` selected` : ""}>${s.label}</option>`)}
</select></label>
<label>From<input type="date" name="dateGte" value="${query.dateGte ?? ""}"></label>
<label>To<input type="date" name="dateLte" value="${query.dateLte ?? ""}"></label>
<label>Per page<select name="pageSize">${pageSizeOptions(pageSize)}</select></label>
<button type="submit">Apply</button>
<a href="/app/submissions">Clear</a>
</form>`;
}

function row(item: Item): Html {
  return html`<tr>
<th scope="row"><a href="/app/submissions/${item.id}">${utcSecond(item.receivedAt)}</a></th>
<td>v${item.apiVersion}</td><td>${yesNo(item.dryRun)}</td><td>${statusCell(item.status)}</td>
<td class="num">${count(item.recordCount)}</td><td class="num">${count(item.createdCount)}</td>
<td class="num">${count(item.updatedCount)}</td><td class="num">${count(item.problemCount)}</td>
<td>${item.keyPrefix ?? "—"}</td><td>${item.idempotencyKey ?? "—"}</td>
</tr>`;
}

function table(page: SubmissionPage): Html {
  const text = ["Received", "API", "Dry run", "Status"];
  const numeric = ["Records", "Created", "Updated", "Problems"];
  return html`${tableRegion("Submissions")}<table id="submissions">
<caption>Submissions (${page.totalCount} matching)</caption>
<thead><tr>${text.map((h) => html`<th scope="col">${h}</th>`)}${numeric.map((h) => html`<th scope="col" class="num">${h}</th>`)}<th scope="col">Key prefix</th><th scope="col">Idempotency-Key</th></tr></thead>
<tbody>${page.items.map(row)}</tbody>
</table></div>`;
}

/** The history: filters, the table (newest first, as the API lists it), the pager. */
export function submissionsBody(query: SubmissionsQuery, page: SubmissionPage): Html {
  return html`${filterForm(query)}
<p class="note">Every request to a submission endpoint that was decided (accepted or rejected, dry runs too), newest first; open one for its problems.</p>
${page.items.length === 0 ? html`<p class="note">${emptyNote("submission", query, page)}</p>` : table(page)}
${pager("/app/submissions", { ...query, pageSize: query.pageSize ?? SUBMISSIONS_PAGE_SIZE }, page)}`;
}

export const submissionTitle = (s: SubmissionDetail) => `Submission of ${utcSecond(s.receivedAt)}`;

function facts(s: SubmissionDetail): Html {
  const fact = (label: string, value: Html | string) =>
    html`<div class="card"><dt>${label}</dt><dd>${value}</dd></div>`;
  return html`<dl class="cards">
${fact("Status", statusCell(s.status))}
${fact("API", `v${s.apiVersion}`)}
${fact("Dry run", yesNo(s.dryRun))}
${fact("Records", count(s.recordCount))}
${fact("Created", count(s.createdCount))}
${fact("Updated", count(s.updatedCount))}
${fact("Problems", count(s.problemCount))}
${fact("Key prefix", s.keyPrefix ?? "—")}
${fact("Idempotency-Key", s.idempotencyKey ?? "—")}
${fact("Submission id", s.id)}
</dl>`;
}

function problemsTable(s: SubmissionDetail): Html {
  if (s.problemCount === 0) return html`<p class="note">Accepted: no problem.</p>`;
  const caption =
    s.problems.length < s.problemCount
      ? `Problems (the first ${count(s.problems.length)} of ${count(s.problemCount)})`
      : `Problems (${count(s.problemCount)})`;
  return html`${tableRegion("Problems")}<table id="problems">
<caption>${caption}</caption>
<thead><tr><th scope="col">Path</th><th scope="col">Message</th><th scope="col">Code</th></tr></thead>
<tbody>${s.problems.map(
    (p) =>
      html`<tr><td>${p.path ?? "(whole body)"}</td><td>${p.message}</td><td>${p.code}</td></tr>`,
  )}</tbody>
</table></div>`;
}

/** One submission: its figures and the problems it was answered, each with its code. */
export function submissionBody(s: SubmissionDetail): Html {
  return html`<p><a href="/app/submissions">All submissions</a></p>
${facts(s)}
${problemsTable(s)}`;
}
