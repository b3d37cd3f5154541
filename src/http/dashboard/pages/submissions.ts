import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import { ValidationError } from "../../../domain/errors.js";
import { problemsOf } from "../../../schemas/problems.js";
import { submissionParamsSchema, submissionsQuerySchema } from "../../../schemas/submissions.js";
import type { Services } from "../../../services/index.js";
import { sendPage } from "../layout.js";
import type { DashboardPage } from "../page.js";
import { formQuery } from "./form-query.js";
import {
  SUBMISSIONS_PAGE_SIZE,
  submissionBody,
  submissionsBody,
  submissionTitle,
} from "./submissions-view.js";

/** Checked by the API's own schema: the same 400 problems as the API's. */
function parsed<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const result = schema.safeParse(input);
  if (!result.success) throw new ValidationError(problemsOf(result.error));
  return result.data;
}

/**
 * The market maker's submission log: the history with the API's filters and paging, and one
 * submission with its problems. Both read through the services of GET /api/v1/submissions and
 * GET /api/v1/submissions/{id}: another organization's submission is the same 404.
 */
export const submissionsPage: DashboardPage = {
  kinds: ["market_maker"],
  nav: [{ path: "/app/submissions", label: "Submissions", kinds: ["market_maker"] }],
  routes(app: FastifyInstance, services: Services) {
    app.get("/submissions", { schema: { hide: true } }, async (request, reply) => {
      const query = parsed(submissionsQuerySchema, formQuery(request.query));
      const page = await services.listSubmissions(request.dashboard.caller, {
        ...query,
        pageSize: query.pageSize ?? SUBMISSIONS_PAGE_SIZE,
      });
      return sendPage(request, reply, { title: "Submissions", body: submissionsBody(query, page) });
    });
    app.get("/submissions/:id", { schema: { hide: true } }, async (request, reply) => {
      const { id } = parsed(submissionParamsSchema, request.params);
      const submission = await services.getSubmission(request.dashboard.caller, id);
      return sendPage(request, reply, {
        title: submissionTitle(submission),
        body: submissionBody(submission),
        current: "/app/submissions",
      });
    });
  },
};
