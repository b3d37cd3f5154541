import { assetPath } from "../assets.js";
import { type Html, html } from "../html.js";

/** The stylesheet of the market, calendar and coin pages (linked from the page's body). */
export const pageStyles = (): Html =>
  html`<link rel="stylesheet" href="${assetPath("dashboard-charts.css")}">`;

/** uPlot and the script that draws each chart from its table. */
export const chartScripts = (): Html =>
  html`<link rel="stylesheet" href="${assetPath("uPlot.min.css")}">
<script src="${assetPath("uPlot.iife.min.js")}" defer></script>
<script src="${assetPath("dashboard-charts.js")}" defer></script>`;
