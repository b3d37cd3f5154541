-- Notifications (CONTRACT section 7): subscribed endpoints, the events the service raises,
-- and one delivery per event and endpoint (the durable queue: a pending delivery survives a
-- crash or restart; several `serve` processes take due ones with FOR UPDATE SKIP LOCKED).

-- An HTTPS endpoint an organization subscribed to some event types (`{*}`: all of them).
-- `secret` (`whsec_` + base64 of 32 random bytes) is kept as given: signing needs it.
-- `failing_since`: the first failed attempt since the last success (null: none failed since);
-- an endpoint failing for 5 days is disabled.
CREATE TABLE webhooks (
  id uuid PRIMARY KEY,
  organization_id text COLLATE "C" NOT NULL REFERENCES organizations (id),
  url text NOT NULL,
  events text[] NOT NULL CHECK (cardinality(events) > 0),
  description text,
  secret text NOT NULL,
  disabled boolean NOT NULL DEFAULT false,
  failing_since timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhooks_organization_idx ON webhooks (organization_id, created_at);

-- An event, recorded once: in the transaction of the change that raised it, or by a job
-- deriving it from stored state. `dedup_key` makes a second recording of the same event a
-- no-op (report.missing once per market and day, ...). `organization_id` and `base_coin_id`
-- decide who hears of it (the market maker, projects owning the coin, operators);
-- `webhook_id` set: meant for that endpoint only (webhook.test). `data` is `json`, not
-- `jsonb`, so that every attempt sends the payload with the keys in the order written.
CREATE TABLE webhook_events (
  id uuid PRIMARY KEY,
  type text NOT NULL,
  organization_id text COLLATE "C" NOT NULL REFERENCES organizations (id),
  base_coin_id text COLLATE "C",
  webhook_id uuid REFERENCES webhooks (id) ON DELETE CASCADE,
  data json NOT NULL,
  occurred_at timestamptz NOT NULL,
  dedup_key text UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- One event for one endpoint: its id is the `webhook-id` header, the same on every attempt.
-- A process takes a due delivery by moving `next_attempt_at` past the attempt's timeout and
-- setting `claimed_until` (its lease), in a statement of its own: no transaction stays open
-- while the receiver answers, and a process killed mid-attempt leaves it due again once the
-- lease ends.
CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY,
  webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event_id uuid NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  last_attempt_at timestamptz,
  last_status_code integer,
  last_error text,
  claimed_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL)),
  UNIQUE (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at)
  WHERE status = 'pending';
CREATE INDEX webhook_deliveries_log_idx ON webhook_deliveries (webhook_id, created_at DESC, id);
