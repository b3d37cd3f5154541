import { type Html, html } from "../html.js";

/**
 * The opening of a table's scroll area (closed by `</div>`): focusable, so that a keyboard can
 * scroll a wide table, and a named region, so that a screen reader says what it scrolls.
 */
export const tableRegion = (label: string): Html =>
  html`<div class="table-wrap" tabindex="0" role="region" aria-label="${label}">`;
