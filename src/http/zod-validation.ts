import type { FastifySchemaCompiler } from "fastify";
import type { z } from "zod";
import { ValidationError } from "../domain/errors.js";
import { problemsOf } from "../schemas/problems.js";
import { zod3Messages } from "../schemas/zod-messages.js";

/**
 * Validates a route's query string and path parameters with its Zod schema, in the specified
 * 400 shape (path = parameter name) and texts. Bodies and headers a route declares are
 * documented only: the submission service checks a batch as a whole (every problem at once,
 * in record order, with reference data), and `x-dry-run` is read by its route.
 */
export const validatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
  if (httpPart !== "querystring" && httpPart !== "params") return () => true;
  return (data) => {
    const parsed = schema.safeParse(data, zod3Messages);
    return parsed.success
      ? { value: parsed.data }
      : { error: new ValidationError(problemsOf(parsed.error)) };
  };
};
