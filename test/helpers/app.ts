import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { loadConfig } from "../../src/config.js";
import { buildApp } from "../../src/http/app.js";
import type { Fixture } from "../../src/schemas/fixture.js";
import { loadFixture } from "../../src/services/fixtures.js";
import { createServices, type Services } from "../../src/services/index.js";
import type { ReadRouting } from "../../src/store/read-router.js";
import { checkAnswersOf } from "./conformance.js";
import { freshDatabase, type TestDatabase, type TestPool } from "./database.js";
import { baseFixture } from "./fixture.js";

export type TestApp = {
  app: FastifyInstance;
  database: TestDatabase;
  services: Services;
  /** Sends a request with the given API key (or none). */
  request(options: InjectOptions & { key?: string | null }): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
};

/** A fresh database with the fixture loaded, and the app on top of it (no port). */
export async function startTestApp(
  options: {
    fixture?: Fixture;
    env?: Record<string, string>;
    now?: () => Date;
    /** Where reads go (the read-replica routing); default: the one database. */
    reads?: (database: TestDatabase) => ReadRouting;
    /** The database's connection pool (PostgreSQL only). */
    pool?: TestPool;
  } = {},
): Promise<TestApp> {
  const database = await freshDatabase({ pool: options.pool });
  await loadFixture(database.stores, options.fixture ?? baseFixture(), new Date());
  const config = loadConfig({ REFERENCE_DATA_CHECK_MS: "0", ...options.env });
  const services = createServices(database.stores, {
    referenceDataCheckMs: 0,
    now: options.now,
    reportDeadlineUtc: config.reportDeadlineUtc,
    webhooks: config.webhooks,
    dashboardSessions: config.dashboardSessions,
    reads: options.reads?.(database),
  });
  const app = await buildApp({ services, http: config.http, logger: false });
  // Every answer, in any test, is checked against the app's OpenAPI document.
  const conformance = checkAnswersOf(app);
  return {
    app,
    database,
    services,
    async request({ key, headers, ...rest }) {
      const before = conformance.violations().length;
      const response = await app.inject({
        ...rest,
        headers: { ...(key ? { authorization: key } : {}), ...headers },
      });
      if (String(response.headers["content-type"]).startsWith("text/csv")) {
        conformance.check({
          method: rest.method ?? "GET",
          url: String(rest.url ?? rest.path),
          statusCode: response.statusCode,
          headers: response.headers,
          body: response.body,
        });
      }
      const found = conformance.violations().slice(before);
      if (found.length > 0) throw new Error(`answer not as documented:\n${found.join("\n")}`);
      return response;
    },
    async close() {
      await app.close();
      await database.close();
      const found = conformance.violations();
      if (found.length > 0) throw new Error(`answers not as documented:\n${found.join("\n")}`);
    },
  };
}
