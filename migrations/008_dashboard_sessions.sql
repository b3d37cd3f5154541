-- Dashboard sign-ins (`/app`). The browser holds a random token in a cookie; only its SHA-256
-- is stored, so a copy of this table signs no one in. A session belongs to the API key it was
-- opened with: every request reads the key with it, so revoking the key ends the session at
-- once (and deleting a key would delete its sessions). Expiry is judged by the service
-- (idle: `last_seen_at`; absolute: `created_at`), with its configured limits.
CREATE TABLE dashboard_sessions (
  token_hash text PRIMARY KEY,
  api_key_id uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL
);
CREATE INDEX dashboard_sessions_api_key_idx ON dashboard_sessions (api_key_id);
CREATE INDEX dashboard_sessions_last_seen_idx ON dashboard_sessions (last_seen_at);

-- Market-data freshness for the operator's dashboard: when the reference data last changed
-- (set with every version bump) and when a market-data sync last completed (changed or not).
ALTER TABLE reference_data_version
  ADD COLUMN changed_at timestamptz,
  ADD COLUMN synced_at timestamptz;
