import { addDays, addMonths, monthOf } from "../../../domain/dates.js";
import type { CalendarDay, CalendarMarket } from "../../../services/dashboard-calendar.js";
import { type Html, html } from "../html.js";

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];
const WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

const STATUS_TEXT = {
  met: "met",
  missed: "missed",
  missing: "missing",
  pending: "pending",
} as const;

/** What a day's cell says, in words (the colour and the marks say the same). */
export function dayText(day: CalendarDay): string {
  const words: string[] = [STATUS_TEXT[day.status]];
  if (day.late) words.push("late");
  if (day.ineligible) words.push("ineligible");
  if (day.failedKpis.length > 0) words.push(`failed ${day.failedKpis.join(", ")}`);
  return words.join(", ");
}

function dayCell(date: string, day: CalendarDay | undefined, inRange: boolean): Html {
  const number = Number(date.slice(8));
  if (!inRange) return html`<td class="cal-out"></td>`;
  if (day === undefined)
    return html`<td class="cal-none">${number}<span class="visually-hidden"> no obligation</span></td>`;
  const marks = `${day.late ? "L" : ""}${day.ineligible ? "I" : ""}`;
  // Kept small: a year of 20 markets is 7,320 cells. The class says the status and marks to
  // the eye, the title on hover, the hidden text to a screen reader.
  return html`<td class="cal-${day.status}${day.late ? " cal-late" : ""}${day.ineligible ? " cal-ineligible" : ""}" data-date="${date}" title="${date}: ${dayText(day)}">${number}${marks === "" ? "" : html`<span class="marks" aria-hidden="true">${marks}</span>`}<span class="visually-hidden"> ${dayText(day)}</span></td>`;
}

/** Monday = 0 … Sunday = 6. */
const weekday = (date: string) => (new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7;

function monthTable(
  month: string,
  byDate: ReadonlyMap<string, CalendarDay>,
  range: { dateGte: string; dateLte: string },
): Html {
  const next = addMonths(month, 1);
  const weeks: Html[] = [];
  let date = addDays(month, -weekday(month));
  while (date < next) {
    const cells: Html[] = [];
    let anyInRange = false;
    for (let d = 0; d < 7; d++, date = addDays(date, 1)) {
      const inMonth = date >= month && date < next;
      const inRange = inMonth && date >= range.dateGte && date <= range.dateLte;
      anyInRange ||= inRange;
      cells.push(
        inMonth ? dayCell(date, byDate.get(date), inRange) : html`<td class="cal-out"></td>`,
      );
    }
    // Weeks wholly outside the range are left out (a range rarely starts on a month's first).
    if (anyInRange) weeks.push(html`<tr>${cells}</tr>`);
  }
  const [year, m] = month.split("-");
  return html`<table class="calendar">
<caption>${MONTHS[Number(m) - 1]} ${year}</caption>
<thead><tr>${WEEKDAYS.map((w) => html`<th scope="col">${w}</th>`)}</tr></thead>
<tbody>${weeks}</tbody>
</table>`;
}

/** One obligation market's calendar: a month table per month of the range. */
export function calendarGrid(
  market: CalendarMarket,
  range: { dateGte: string; dateLte: string },
): Html {
  const byDate = new Map(market.days.map((d) => [d.date, d]));
  const months: Html[] = [];
  for (let month = monthOf(range.dateGte); month <= range.dateLte; month = addMonths(month, 1)) {
    months.push(monthTable(month, byDate, range));
  }
  return html`<div class="months">${months}</div>`;
}

/** The legend: what each colour and mark means. */
export const calendarLegend = html`<ul class="legend" aria-label="Legend">
<li><span class="swatch cal-met"></span> met: reported, every KPI met</li>
<li><span class="swatch cal-missed"></span> missed: reported, a KPI not met</li>
<li><span class="swatch cal-missing"></span> missing: no report</li>
<li><span class="swatch cal-pending"></span> pending: deadline not passed yet</li>
<li><span class="swatch cal-none"></span> no obligation that day</li>
<li><span class="mark">L</span> late: first sent after the deadline</li>
<li><span class="mark">I</span> ineligible: no market data matched the report</li>
</ul>`;
