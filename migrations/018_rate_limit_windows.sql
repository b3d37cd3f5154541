-- Rate limits shared by every `serve` process (RATE_LIMIT_STORE=database): one row per limit
-- and budget key (a stored API key's id, a client address), counting the requests of its
-- current fixed window. UNLOGGED: a counter is worth no WAL (no write-ahead log on each
-- request, nothing sent to replicas); after a crash PostgreSQL empties it, which only hands
-- every client a fresh window. Each process deletes windows that ended (at most once a minute).
CREATE UNLOGGED TABLE rate_limit_windows (
  name text COLLATE "C" NOT NULL,
  key text COLLATE "C" NOT NULL,
  count integer NOT NULL,
  resets_at timestamptz NOT NULL,
  PRIMARY KEY (name, key)
) WITH (fillfactor = 70);
