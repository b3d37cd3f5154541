import type { Kysely } from "kysely";
import type { Tables } from "./tables.js";

/** Signing-secret rotation of an organization's endpoints (the secrets are never read back). */
export function createWebhookSecretStore(db: Kysely<Tables>) {
  return {
    /**
     * Makes `secret` the endpoint's secret. The one it replaces stays valid until
     * `previousExpiresAt`, or not at all when that is null; a secret replaced earlier is dropped
     * (one previous secret at a time). False when the organization has no such endpoint.
     */
    async rotate(input: {
      organizationId: string;
      id: string;
      secret: string;
      previousExpiresAt: Date | null;
      now: Date;
    }): Promise<boolean> {
      const keep = input.previousExpiresAt !== null;
      const row = await db
        .updateTable("webhooks")
        .set((eb) => ({
          previous_secret: keep ? eb.ref("secret") : null,
          previous_secret_expires_at: input.previousExpiresAt,
          secret: input.secret,
          updated_at: input.now,
        }))
        .where("organization_id", "=", input.organizationId)
        .where("id", "=", input.id)
        .returning("id")
        .executeTakeFirst();
      return row !== undefined;
    },
  };
}

export type WebhookSecretStore = ReturnType<typeof createWebhookSecretStore>;
