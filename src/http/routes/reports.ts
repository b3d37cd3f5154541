import type { FastifyInstance } from "fastify";
import { ValidationError } from "../../domain/errors.js";
import type { SchemaVersion } from "../../domain/report.js";
import { listQuerySchema } from "../../schemas/list-query.js";
import { problemsOf } from "../../schemas/problems.js";
import type { Services } from "../../services/index.js";
import { prefersCsv, reportCsvStream } from "../report-csv.js";

export function reportRoutes(services: Services) {
  return async (app: FastifyInstance) => {
    for (const version of [1, 2] as SchemaVersion[]) {
      app.post(`/api/v${version}/report`, async (request, reply) => {
        const dryRun = dryRunOf(request.headers["x-dry-run"]);
        const result = await services.submitReports(request.caller, {
          version,
          body: request.body,
          dryRun,
        });
        return reply.code(201).send(result);
      });
    }
    app.get("/api/v1/reports", async (request, reply) => {
      const query = listQuerySchema.safeParse(request.query);
      if (!query.success) {
        throw new ValidationError(problemsOf(query.error));
      }
      if (!prefersCsv(request.headers.accept)) {
        const page = await services.listReportsJson(request.caller, query.data);
        return reply.type("application/json; charset=utf-8").send(page);
      }
      const chunks = services.exportReports(request.caller, query.data);
      // The first chunk is read before answering, so that a failure still gets a proper status.
      const first = await services.guard(() => chunks.next());
      return reply
        .header("content-type", "text/csv; charset=utf-8")
        .header("content-disposition", 'attachment; filename="reports.csv"')
        .send(reportCsvStream(first, chunks));
    });
  };
}

/** `x-dry-run`: true or false in any case, or absent; anything else must not persist silently. */
function dryRunOf(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  const value = typeof header === "string" ? header.trim().toLowerCase() : "";
  if (value === "true") return true;
  if (value === "false") return false;
  throw new ValidationError([{ path: "x-dry-run", message: "Expected 'true' or 'false'" }]);
}
