import type { Chart } from "../../../services/dashboard-market.js";
import { escapeHtml, Html, html } from "../html.js";
import { dayCount, figure } from "./market-links.js";
import { tableRegion } from "./table-region.js";

/**
 * A chart and its numbers: a `<figure>` whose table (in a `<details>`, for screen readers and
 * anyone who wants the figures) is what `dashboard-charts.js` draws, so the chart and the
 * table cannot differ. Without JavaScript the table is the chart, and the empty chart's box
 * says so. Threshold columns are marked `data-threshold` (drawn dashed).
 */
export function chartFigure(chart: Chart, dates: readonly string[]): Html {
  const unit = chart.unit === "%" ? "%" : "USD";
  const head = chart.series.map(
    (s) =>
      html`<th scope="col" class="num"${s.threshold ? html` data-threshold` : ""}>${s.label} (${unit})</th>`,
  );
  // Built as one string: two years of days is thousands of cells, and every value is a date
  // or a number (the dates escaped all the same).
  let rows = "";
  for (let i = 0; i < dates.length; i++) {
    rows += `<tr><th scope="row">${escapeHtml(dates[i] ?? "")}</th>`;
    // Right-aligned by the stylesheet (no class per cell: two years is 5,000 rows a page).
    for (const s of chart.series) rows += `<td>${figure(s.values[i])}</td>`;
    rows += "</tr>\n";
  }
  return html`<figure class="chart" id="${chart.id}" data-points="${dates.length}">
<figcaption>${chart.title} (${unit})</figcaption>
<div class="chart-canvas" aria-hidden="true"><noscript><p class="note">The chart is drawn with JavaScript, which is off: its figures are in the table below (open it).</p></noscript></div>
<details>
<summary>${chart.title}: the figures (${dayCount(dates.length)})</summary>
${tableRegion(`${chart.title}: figures`)}
<table>
<caption>${chart.title}, by day (${unit})</caption>
<thead><tr><th scope="col">Date</th>${head}</tr></thead>
<tbody>
${new Html(rows)}</tbody>
</table>
</div>
</details>
</figure>`;
}
