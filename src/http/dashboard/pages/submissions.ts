import type { FastifyInstance } from "fastify";
import { html } from "../html.js";
import { sendPage } from "../layout.js";
import type { DashboardPage } from "../page.js";

/**
 * PLACEHOLDER: the submissions history (every submission, rejected records and their
 * problems) is built on the submission log API of CONTRACT section 5, which another branch is
 * adding. Replace this page's body with that service's list once it has landed.
 */
export const submissionsPage: DashboardPage = {
  kinds: ["market_maker"],
  nav: [{ path: "/app/submissions", label: "Submissions", kinds: ["market_maker"] }],
  routes(app: FastifyInstance) {
    app.get("/submissions", { schema: { hide: true } }, async (request, reply) =>
      sendPage(request, reply, {
        title: "Submissions",
        body: html`<p class="placeholder">The history of your submissions, with rejected records and their problems, will be shown here once the service keeps a submission log (CONTRACT section 5).</p>`,
      }),
    );
  },
};
