import type { FastifyInstance } from "fastify";
import type { Services } from "../../../services/index.js";
import { type Html, html } from "../html.js";
import { sendPage } from "../layout.js";
import type { DashboardPage } from "../page.js";
import { tableRegion } from "../views/table-region.js";

const OPERATOR = ["operator"] as const;

type Keys = Awaited<ReturnType<Services["operator"]["apiKeys"]>>;

/** A time to the minute, UTC, as the operator's logs show it. */
export const utcMinute = (at: Date | null) =>
  at === null ? null : `${at.toISOString().slice(0, 16).replace("T", " ")} UTC`;

function keysTable(keys: Keys): Html {
  return html`${tableRegion("API keys")}<table>
<caption>API keys (${keys.length}, ${keys.filter((k) => k.revokedAt === null).length} active)</caption>
<thead><tr><th scope="col">Organization</th><th scope="col">Prefix</th><th scope="col">Label</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Revoked</th></tr></thead>
<tbody>${keys.map(
    (k) =>
      html`<tr><th scope="row">${k.organizationName}</th><td><code>${k.prefix === "" ? "(none)" : k.prefix}</code></td><td>${k.label === "" ? "—" : k.label}</td>
<td>${utcMinute(k.createdAt)}</td><td>${utcMinute(k.lastUsedAt) ?? "never"}</td><td>${utcMinute(k.revokedAt) ?? "no"}</td></tr>`,
  )}</tbody>
</table></div>`;
}

/** Every API key of the platform: never a secret or its hash (neither is read). */
export const operatorKeysPage: DashboardPage = {
  kinds: OPERATOR,
  nav: [{ path: "/app/keys", label: "API keys", kinds: OPERATOR }],
  routes(app: FastifyInstance, services: Services) {
    app.get("/keys", { schema: { hide: true } }, async (request, reply) => {
      const keys = await services.operator.apiKeys(request.dashboard.caller);
      return sendPage(request, reply, {
        title: "API keys",
        body: html`<p class="note">Keys are stored as hashes only: a key chosen by hand (fixtures) has no prefix. Create a key with <code>trading-reports key create &lt;organization&gt;</code> (it is printed once) and revoke one with <code>trading-reports key revoke &lt;organization&gt; &lt;id or prefix&gt;</code>.</p>
${keysTable(keys)}`,
      });
    });
  },
};
