import { type Kysely, sql } from "kysely";
import type { PreviousSecret } from "../domain/webhook.js";
import type { Tables } from "./tables.js";

/** The stored `previous_secrets` (JSON, dates as text) as the domain's. */
export function previousSecretsOf(stored: unknown): PreviousSecret[] {
  const entries = (Array.isArray(stored) ? stored : []) as { secret: string; expiresAt: string }[];
  return entries.map((p) => ({ secret: p.secret, expiresAt: new Date(p.expiresAt) }));
}

/** Signing-secret rotation of an organization's endpoints (read only inside its transaction). */
export function createWebhookSecretStore(db: Kysely<Tables>) {
  return {
    /** The endpoint's secrets, its row locked until the transaction ends; undefined if none. */
    async lockSecrets(organizationId: string, id: string) {
      if (!db.isTransaction) throw new Error("lockSecrets runs inside a transaction");
      const row = await db
        .selectFrom("webhooks")
        .select(["secret", "previous_secrets"])
        .where("organization_id", "=", organizationId)
        .where("id", "=", id)
        .forUpdate()
        .executeTakeFirst();
      if (row === undefined) return undefined;
      return { secret: row.secret, previousSecrets: previousSecretsOf(row.previous_secrets) };
    },

    /** Stores the endpoint's new secret and the replaced ones still valid. */
    async store(id: string, secret: string, previous: readonly PreviousSecret[], now: Date) {
      const json = JSON.stringify(
        previous.map((p) => ({ secret: p.secret, expiresAt: p.expiresAt.toISOString() })),
      );
      await db
        .updateTable("webhooks")
        .set({ secret, previous_secrets: sql`${json}::jsonb`, updated_at: now })
        .where("id", "=", id)
        .execute();
    },
  };
}

export type WebhookSecretStore = ReturnType<typeof createWebhookSecretStore>;
