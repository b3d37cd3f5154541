import { type Kysely, type RawBuilder, sql } from "kysely";
import type { Tables } from "./tables.js";

/**
 * Who a claim may give attempts to (README "Notifications", "At least once"). The caps count
 * the attempts in flight over every process (the leases not ended), so they hold across
 * several `serve` processes on one database.
 */
export type ClaimShares = {
  /** At most this many attempts in flight to one endpoint. */
  perEndpoint: number;
  /** At most this many attempts in flight to one organization's endpoints together. */
  perOrganization: number;
  /**
   * The claim's last this many slots go only to an organization with no attempt in flight:
   * however many receivers of other organizations hang, a new one gets a slot at once.
   */
  reserved: number;
};

/** How many of the oldest due deliveries a claim of `limit` looks at first. */
const windowFor = (limit: number) => Math.max(32, 8 * limit);

/** Attempts in flight per endpoint and per organization, over every process. */
const loads = (now: Date) => sql`in_flight as (
  select d.webhook_id, w.organization_id, count(*)::int as n
  from webhook_deliveries d join webhooks w on w.id = d.webhook_id
  where d.claimed_until is not null and d.claimed_until > ${now}
  group by d.webhook_id, w.organization_id
),
organization_load as (
  select organization_id, sum(n)::int as n from in_flight group by organization_id
)`;

/**
 * The picks among `candidates` (id, webhook_id, next_attempt_at), in claim order: within the
 * caps, organizations take turns (the first attempt of every organization, then the second,
 * …; an organization's least busy endpoints first), oldest due first within a turn; past
 * `limit - reserved`, only an organization's first attempt is taken.
 */
async function pick(
  db: Kysely<Tables>,
  now: Date,
  candidates: RawBuilder<unknown>,
  limit: number,
  shares: ClaimShares,
): Promise<{ ids: string[]; seen: number }> {
  const result = await sql<{ ids: string[] | null; seen: number }>`
    with ${loads(now)},
    ${candidates},
    by_endpoint as (
      select c.id, c.next_attempt_at, w.organization_id, coalesce(f.n, 0) + row_number() over (
        partition by c.webhook_id order by c.next_attempt_at, c.id) as endpoint_nth
      from candidates c join webhooks w on w.id = c.webhook_id
      left join in_flight f on f.webhook_id = c.webhook_id
    ),
    by_organization as (
      select b.id, b.next_attempt_at, coalesce(o.n, 0) + row_number() over (
        partition by b.organization_id order by b.endpoint_nth, b.next_attempt_at, b.id)
        as organization_nth
      from by_endpoint b left join organization_load o on o.organization_id = b.organization_id
      where b.endpoint_nth <= ${shares.perEndpoint}
    ),
    ordered as (
      select id, organization_nth, row_number() over (
        order by organization_nth, next_attempt_at, id) as place
      from by_organization where organization_nth <= ${shares.perOrganization}
    )
    select (select array_agg(id::text order by place) from ordered
        where place <= ${limit}
          and (organization_nth = 1 or place <= ${limit - shares.reserved})) as ids,
      (select count(*)::int from candidates) as seen`.execute(db);
  return { ids: result.rows[0]?.ids ?? [], seen: result.rows[0]?.seen ?? 0 };
}

/**
 * Picks up to `limit` due deliveries. First among the oldest due (`windowFor(limit)` of the
 * due index): cheap while they are spread over organizations. When that window is full and
 * does not fill the claim (it is the backlog of endpoints or organizations at their share),
 * each endpoint with room is looked at through its own index instead, so that a delivery
 * behind a backlog is found without reading the backlog whole.
 */
export async function pickDue(
  db: Kysely<Tables>,
  now: Date,
  limit: number,
  shares: ClaimShares,
): Promise<string[]> {
  const oldest = sql`candidates as (
    select d.id, d.webhook_id, d.next_attempt_at from webhook_deliveries d
    where d.status = 'pending' and d.next_attempt_at <= ${now}
    order by d.next_attempt_at
    limit ${windowFor(limit)}
  )`;
  const first = await pick(db, now, oldest, limit, shares);
  if (first.ids.length >= limit || first.seen < windowFor(limit)) return first.ids;
  const perEndpoint = sql`open as (
    select w.id, ${shares.perEndpoint}::int - coalesce(f.n, 0) as share
    from webhooks w left join in_flight f on f.webhook_id = w.id
    left join organization_load o on o.organization_id = w.organization_id
    where not w.disabled and coalesce(o.n, 0) < ${shares.perOrganization}
  ),
  candidates as (
    select c.id, c.webhook_id, c.next_attempt_at from open cross join lateral (
      select d.id, d.webhook_id, d.next_attempt_at from webhook_deliveries d
      where d.webhook_id = open.id and d.status = 'pending' and d.next_attempt_at <= ${now}
      order by d.next_attempt_at
      limit greatest(open.share, 0)
    ) c
  )`;
  return (await pick(db, now, perEndpoint, limit, shares)).ids;
}
