import type { Command } from "commander";
import { NotFoundError, ValidationError } from "../domain/errors.js";
import type { System } from "../system.js";
import { type Io, json } from "./admin.js";
import { UsageError } from "./read-json.js";
import { textTable } from "./text-table.js";

type WithSystem = <T>(work: (system: System) => Promise<T>) => Promise<T>;
type Options = {
  json?: boolean;
  event: string[];
  description?: string;
  previousValidFor?: string;
};

/** `--previous-valid-for`'s seconds: a whole number (its range is the service's to check). */
function seconds(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,15}$/.test(text))
    throw new UsageError(
      `--previous-valid-for: expected a whole number of seconds (0 to 604800), not '${text}'`,
    );
  return Number(text);
}

const collect = (value: string, previous: string[]) => [...previous, value];

/**
 * `webhook list|create|delete ORG …`: an operator manages an organization's endpoints with
 * the same service (and the same checks) as the organization's own API key.
 */
export function registerWebhookCommands(program: Command, io: Io, withSystem: WithSystem): void {
  const run = runner(io, withSystem);
  const webhook = program
    .command("webhook")
    .description("webhook endpoints of organizations (signed event notifications)");
  json(
    webhook.command("list <organization>").description("list an organization's endpoints"),
  ).action(
    run(
      async (system, [org = ""]) => (await system.services.webhooks.list(org)).items,
      (rows) =>
        textTable([
          ["ID", "URL", "EVENTS", "DISABLED", "DESCRIPTION"],
          ...rows.map((w) => [
            w.id,
            w.url,
            w.events.join(","),
            String(w.disabled),
            w.description ?? "",
          ]),
        ]),
    ),
  );
  json(
    webhook
      .command("create <organization> <url>")
      .description("subscribe an https endpoint of the organization; its secret is printed once")
      .option("--event <type>", "an event type to send (repeat; default: all, *)", collect, [])
      .option("--description <text>", "what the endpoint is for"),
  ).action(
    run(
      (system, [org = "", url], opts) =>
        system.services.webhooks.create(org, {
          url,
          events: opts.event.length > 0 ? opts.event : ["*"],
          description: opts.description,
        }),
      (w) => `created webhook ${w.id} -> ${w.url}\nsecret: ${w.secret}\n(shown once: store it now)`,
    ),
  );
  registerRotateSecret(webhook, run);
  json(
    webhook
      .command("delete <organization> <id>")
      .description("delete an endpoint; nothing more is sent to it"),
  ).action(
    run(
      async (system, [org = "", id = ""]) => {
        await system.services.webhooks.remove(org, id);
        return { deleted: id };
      },
      (r) => `deleted webhook ${r.deleted}`,
    ),
  );
}

/** `webhook rotate-secret ORG ID [--previous-valid-for SECONDS]` (POST …/rotate-secret). */
function registerRotateSecret(webhook: Command, run: ReturnType<typeof runner>) {
  json(
    webhook
      .command("rotate-secret <organization> <id>")
      .description("a new signing secret, printed once; the replaced one keeps signing a while")
      .option(
        "--previous-valid-for <seconds>",
        "how long deliveries also carry the replaced secret's signature (0 to 604800; default 86400)",
      ),
  ).action(
    run(
      (system, [org = "", id = ""], opts) =>
        system.services.webhooks
          .rotateSecret(org, id, { previousSecretValidForSeconds: seconds(opts.previousValidFor) })
          .catch((error: unknown) => {
            if (!(error instanceof ValidationError)) throw error;
            throw new ValidationError(
              error.problems.map((p) => ({ ...p, path: "--previous-valid-for" })),
            );
          }),
      (r) =>
        `rotated the secret of webhook ${r.id}\nsecret: ${r.secret}\n(shown once: store it now)\n${
          r.previousSecretExpiresAt === null
            ? "the replaced secret signs nothing more"
            : `the replaced secret also signs deliveries until ${r.previousSecretExpiresAt}`
        }`,
    ),
  );
}

/** An action: the organization named first must exist; the result printed, or as JSON. */
function runner(io: Io, withSystem: WithSystem) {
  return <T>(
    work: (system: System, args: string[], opts: Options) => Promise<T>,
    print: (r: T) => string,
  ) =>
    async (...actionArgs: unknown[]) => {
      const command = actionArgs.at(-1) as Command;
      const opts = command.opts() as Options;
      const result = await withSystem(async (system) => {
        const organizationId = command.args[0] ?? "";
        if ((await system.stores.organizations.organization(organizationId)) === undefined)
          throw new NotFoundError(`organization '${organizationId}' does not exist`);
        return work(system, command.args.map(String), opts);
      });
      io.stdout.write(opts.json ? `${JSON.stringify(result, null, 2)}\n` : `${print(result)}\n`);
    };
}
