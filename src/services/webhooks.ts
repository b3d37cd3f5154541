import { randomUUID } from "node:crypto";
import { type TargetPolicy, targetProblem } from "../adapters/webhook-http.js";
import { ConflictError, NotFoundError, ValidationError } from "../domain/errors.js";
import {
  DEFAULT_PREVIOUS_SECRET_SECONDS,
  DISABLED_NOT_SENT,
  generateWebhookSecret,
  MAX_PREVIOUS_SECRETS,
  secretsAfterRotation,
  UNSUBSCRIBED_NOT_SENT,
} from "../domain/webhook.js";
import { parseOrRefuse } from "../schemas/problems.js";
import {
  type DeliveriesQuery,
  newWebhookSchema,
  rotateSecretSchema,
  webhookPatchSchema,
} from "../schemas/webhook.js";
import type { Stores } from "../store/stores.js";

export type WebhookOptions = TargetPolicy & {
  /** WEBHOOKS_PER_ORGANIZATION */
  perOrganization: number;
};

export const DEFAULT_WEBHOOK_OPTIONS: WebhookOptions = {
  allowInsecure: false,
  perOrganization: 10,
};

const DEFAULT_DELIVERIES_PAGE_SIZE = 100;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const notFound = () => new NotFoundError("Webhook not found");

/**
 * Subscriptions of one organization (CONTRACT section 7): the API's, for any caller kind (the
 * events an endpoint gets are decided by its organization's read scope when they are
 * published), and the operator's CLI. An id of another organization is not found.
 */
export function createWebhookServices(stores: Stores, now: () => Date, options: WebhookOptions) {
  const { webhooks } = stores;

  const checkUrl = async (url: string) => {
    const problem = await targetProblem(url, options);
    if (problem !== null) throw new ValidationError([{ path: "url", message: problem }]);
  };

  const requireWebhook = async (organizationId: string, id: string) => {
    const webhook = UUID.test(id) ? await webhooks.get(organizationId, id) : undefined;
    if (webhook === undefined) throw notFound();
    return webhook;
  };

  return {
    /** Creates an endpoint; its secret is in this answer only. */
    async create(organizationId: string, body: unknown) {
      const input = parseOrRefuse(newWebhookSchema, body);
      await checkUrl(input.url);
      const secret = generateWebhookSecret();
      const created = await stores.transaction(async (tx) => {
        // Two creations at once count one after the other: the limit holds.
        await tx.organizations.lockOrganization(organizationId);
        if ((await tx.webhooks.count(organizationId)) >= options.perOrganization)
          throw new ConflictError(
            `An organization may have at most ${options.perOrganization} webhooks (WEBHOOKS_PER_ORGANIZATION); delete one first`,
          );
        return tx.webhooks.create({
          id: randomUUID(),
          organizationId,
          url: input.url,
          events: input.events,
          description: input.description ?? null,
          secret,
          now: now(),
        });
      });
      return { ...created, secret };
    },

    list: async (organizationId: string) => ({ items: await webhooks.list(organizationId) }),

    get: requireWebhook,

    async update(organizationId: string, id: string, body: unknown) {
      await requireWebhook(organizationId, id);
      const patch = parseOrRefuse(webhookPatchSchema, body);
      if (patch.url !== undefined) await checkUrl(patch.url);
      const updated = await stores.transaction(async (tx) => {
        // An event recorded while the endpoint was being disabled may have left a delivery
        // pending: enabling it again must not send that.
        if (patch.disabled === false) await tx.webhooks.failPending(id, DISABLED_NOT_SENT);
        const row = await tx.webhooks.update(organizationId, id, patch, now());
        if (patch.disabled === true) await tx.webhooks.failPending(id, DISABLED_NOT_SENT);
        if (patch.events !== undefined)
          await tx.webhooks.failUnsubscribed(id, UNSUBSCRIBED_NOT_SENT);
        return row;
      });
      if (updated === undefined) throw notFound();
      return updated;
    },

    async remove(organizationId: string, id: string) {
      if (!UUID.test(id) || !(await webhooks.remove(organizationId, id))) throw notFound();
    },

    /**
     * A new signing secret, shown in this answer only. The replaced one keeps signing
     * deliveries beside it for `previousSecretValidForSeconds` (default 24 hours), as do the
     * ones replaced earlier until their own expiry, so that receivers can move to the new
     * secret without rejecting a delivery; 0 ends them all (a leak).
     */
    async rotateSecret(organizationId: string, id: string, body: unknown) {
      await requireWebhook(organizationId, id);
      const input = parseOrRefuse(rotateSecretSchema, body ?? {});
      const seconds = input.previousSecretValidForSeconds ?? DEFAULT_PREVIOUS_SECRET_SECONDS;
      const at = now();
      const expiresAt = seconds === 0 ? null : new Date(at.getTime() + seconds * 1000);
      const secret = generateWebhookSecret();
      await stores.transaction(async (tx) => {
        // Rotations of one endpoint one after another: none loses a secret another kept.
        const stored = await tx.webhookSecrets.lockSecrets(organizationId, id);
        if (stored === undefined) throw notFound();
        const previous = secretsAfterRotation(stored.secret, stored.previousSecrets, expiresAt, at);
        if (previous === "too_many")
          throw new ConflictError(
            `${MAX_PREVIOUS_SECRETS} replaced secrets of this webhook still sign deliveries: rotate with previousSecretValidForSeconds 0 (ends them all) or wait until one expires`,
          );
        await tx.webhookSecrets.store(id, secret, previous, at);
      });
      return { id, secret, previousSecretExpiresAt: expiresAt?.toISOString() ?? null };
    },

    /** Queues a `webhook.test` event for this endpoint only. */
    async test(organizationId: string, id: string) {
      const webhook = await requireWebhook(organizationId, id);
      if (webhook.disabled)
        throw new ConflictError("Webhook is disabled: enable it (PATCH disabled: false) first");
      const at = now();
      await stores.webhookEvents.publish(
        [
          {
            type: "webhook.test",
            data: { webhookId: id },
            organizationId,
            baseCoinId: null,
            occurredAt: at,
            dedupKey: null,
            webhookId: id,
          },
        ],
        at,
      );
    },

    async deliveries(organizationId: string, id: string, query: DeliveriesQuery) {
      await requireWebhook(organizationId, id);
      const page = query.page ?? 1;
      const pageSize = query.pageSize ?? DEFAULT_DELIVERIES_PAGE_SIZE;
      const { totalCount, items } = await webhooks.deliveries(id, {
        status: query.status,
        offset: (page - 1) * pageSize,
        limit: pageSize,
      });
      return { page, totalPages: Math.ceil(totalCount / pageSize), totalCount, items };
    },

    /** One more attempt of a delivery, now. */
    async retry(organizationId: string, id: string, deliveryId: string) {
      const webhook = await requireWebhook(organizationId, id);
      const notFound = () => new NotFoundError("Delivery not found");
      // Which endpoint the delivery belongs to decides before that endpoint's state.
      if (!UUID.test(deliveryId) || !(await webhooks.hasDelivery(id, deliveryId))) throw notFound();
      if (webhook.disabled)
        throw new ConflictError("Webhook is disabled: enable it (PATCH disabled: false) first");
      const outcome = await webhooks.retry(id, deliveryId, now());
      if (outcome === "not_found") throw notFound();
      if (outcome === "in_progress")
        throw new ConflictError("An attempt of this delivery is in progress; retry after it");
    },
  };
}
