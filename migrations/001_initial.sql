-- Reference data: coins, exchanges and the markets collected for them.
CREATE TABLE coins (
  id text PRIMARY KEY,
  symbol text NOT NULL,
  name text NOT NULL
);

CREATE TABLE exchanges (
  id text PRIMARY KEY,
  name text NOT NULL,
  spot boolean NOT NULL,
  derivatives boolean NOT NULL,
  market_data boolean NOT NULL,
  exchange_group text NOT NULL
);
CREATE INDEX exchanges_group_idx ON exchanges (exchange_group);

CREATE TABLE markets (
  exchange_id text NOT NULL REFERENCES exchanges (id),
  base_coin_id text NOT NULL REFERENCES coins (id),
  instrument_type text NOT NULL CHECK (instrument_type IN ('spot', 'perp')),
  quote_symbol text NOT NULL CHECK (quote_symbol = upper(quote_symbol)),
  quote_coin_id text REFERENCES coins (id),
  collected_since date NOT NULL,
  PRIMARY KEY (exchange_id, base_coin_id, instrument_type, quote_symbol)
);

-- Bumped by every change of coins, exchanges or markets, so that every server process
-- sharing the database notices and reloads its in-memory copy.
CREATE TABLE reference_data_version (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  version bigint NOT NULL
);
INSERT INTO reference_data_version (singleton, version) VALUES (true, 1);

-- Tenants and their credentials.
CREATE TABLE organizations (
  id text PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  key_hash text NOT NULL UNIQUE,
  prefix text NOT NULL,
  label text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  last_used_at timestamptz
);
CREATE INDEX api_keys_organization_idx ON api_keys (organization_id);

CREATE TABLE engagements (
  id uuid PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  base_coin_id text NOT NULL REFERENCES coins (id),
  type text NOT NULL CHECK (type IN ('project', 'exchange', 'prop')),
  since date NOT NULL,
  until date,
  CHECK (until IS NULL OR until >= since),
  UNIQUE (organization_id, base_coin_id, since)
);

-- Submissions, accepted ones only (dry runs included, flagged).
CREATE TABLE submissions (
  id uuid PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  api_key_id uuid REFERENCES api_keys (id),
  schema_version smallint NOT NULL CHECK (schema_version IN (1, 2)),
  dry_run boolean NOT NULL,
  record_count integer NOT NULL,
  created_count integer NOT NULL,
  updated_count integer NOT NULL,
  submitted_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX submissions_organization_idx ON submissions (organization_id, submitted_at DESC);

-- The current version of every report. The record key (spec section 3) is unique per
-- organization; its index is ordered like the listing (date descending) and carries the id
-- so that paging can walk offsets in an index-only scan before fetching rows.
-- The key columns compare byte-wise (COLLATE "C"): the listing order, and so paging, is the
-- same on every server whatever its locale, and the key indexes compare faster.
CREATE TABLE reports (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  organization_id text COLLATE "C" NOT NULL REFERENCES organizations (id),
  date date NOT NULL,
  exchange_id text COLLATE "C" NOT NULL,
  base_coin_id text COLLATE "C" NOT NULL,
  quote_key text COLLATE "C" NOT NULL,
  instrument_type text COLLATE "C" NOT NULL CHECK (instrument_type IN ('spot', 'perp')),
  quote_coin_id text,
  quote_coin_symbol text,
  type text CHECK (type IN ('project', 'exchange', 'prop')),
  schema_version smallint NOT NULL CHECK (schema_version IN (1, 2)),
  bid_depth_tob double precision,
  bid_depth_10 double precision,
  bid_depth_25 double precision,
  bid_depth_50 double precision NOT NULL,
  bid_depth_100 double precision NOT NULL,
  bid_depth_200 double precision NOT NULL,
  ask_depth_tob double precision,
  ask_depth_10 double precision,
  ask_depth_25 double precision,
  ask_depth_50 double precision NOT NULL,
  ask_depth_100 double precision NOT NULL,
  ask_depth_200 double precision NOT NULL,
  bid_ask_depth_50 double precision NOT NULL,
  bid_ask_depth_100 double precision NOT NULL,
  bid_ask_depth_200 double precision NOT NULL,
  bid_ask_spread double precision NOT NULL,
  top_of_book_percentage double precision,
  order_fill_volume_maker double precision NOT NULL,
  order_fill_volume_taker double precision NOT NULL,
  order_fill_volume_maker_tob double precision,
  eligibility_status text NOT NULL
    CHECK (eligibility_status IN ('eligible', 'ineligible_market_data_missing')),
  eligibility_reason text CHECK (eligibility_reason IN (
    'exchange_market_data_missing', 'base_not_traded', 'pair_not_found', 'before_collection_start')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((eligibility_reason IS NULL) = (eligibility_status = 'eligible'))
);
CREATE UNIQUE INDEX reports_key_idx ON reports
  (organization_id, date DESC, exchange_id, base_coin_id, quote_key, instrument_type) INCLUDE (id);
CREATE INDEX reports_base_coin_idx ON reports
  (organization_id, base_coin_id, date DESC, exchange_id, quote_key, instrument_type) INCLUDE (id);
CREATE INDEX reports_exchange_idx ON reports
  (organization_id, exchange_id, date DESC, base_coin_id, quote_key, instrument_type) INCLUDE (id);

-- Every accepted version of every report, append-only: no submitted value is ever lost.
CREATE TABLE report_versions (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  report_id bigint NOT NULL REFERENCES reports (id),
  submission_id uuid NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  schema_version smallint NOT NULL,
  quote_coin_id text,
  quote_coin_symbol text,
  type text,
  bid_depth_tob double precision,
  bid_depth_10 double precision,
  bid_depth_25 double precision,
  bid_depth_50 double precision NOT NULL,
  bid_depth_100 double precision NOT NULL,
  bid_depth_200 double precision NOT NULL,
  ask_depth_tob double precision,
  ask_depth_10 double precision,
  ask_depth_25 double precision,
  ask_depth_50 double precision NOT NULL,
  ask_depth_100 double precision NOT NULL,
  ask_depth_200 double precision NOT NULL,
  bid_ask_depth_50 double precision NOT NULL,
  bid_ask_depth_100 double precision NOT NULL,
  bid_ask_depth_200 double precision NOT NULL,
  bid_ask_spread double precision NOT NULL,
  top_of_book_percentage double precision,
  order_fill_volume_maker double precision NOT NULL,
  order_fill_volume_taker double precision NOT NULL,
  order_fill_volume_maker_tob double precision
);
CREATE INDEX report_versions_report_idx ON report_versions (report_id);
