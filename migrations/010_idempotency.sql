-- Idempotency-Key (CONTRACT section 5): one row per organization and key.
--
-- A request with a key first claims the row in its own short statement (`claim` is that
-- request's token, the response columns are null: in flight, until `expires_at`, the lease).
-- The 201 is written into the row in the same transaction as the batch it answers, and only by
-- the holder of the claim, so a batch and its stored answer commit together or not at all, on
-- any number of processes. `expires_at` then becomes 24 hours after that answer. Any request
-- may take over a row whose `expires_at` has passed (an answer past retention, or the lease of
-- a request that crashed); a purge deletes such rows in small batches an hour later.
--
-- `response_body` is `text`, not `json`, so that a replay answers the very bytes first sent.
CREATE TABLE idempotency_keys (
  organization_id text COLLATE "C" NOT NULL REFERENCES organizations (id),
  key text COLLATE "C" NOT NULL,
  request_hash text NOT NULL,
  claim uuid NOT NULL,
  status_code smallint,
  response_body text,
  response_headers json,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, key),
  CHECK ((status_code IS NULL) = (response_body IS NULL))
);
CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at);
