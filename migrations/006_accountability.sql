-- Accountability (CONTRACT section 4): who may read what, and what a market maker owes.

-- An organization is a market maker (submits its own reports), a token project (reads the
-- reports of every market maker for its coins) or the operator (reads everything).
ALTER TABLE organizations
  ADD COLUMN kind text NOT NULL DEFAULT 'market_maker'
  CHECK (kind IN ('market_maker', 'project', 'operator'));

-- The base coins a project organization owns.
CREATE TABLE organization_coins (
  organization_id text NOT NULL REFERENCES organizations (id),
  base_coin_id text NOT NULL REFERENCES coins (id),
  PRIMARY KEY (organization_id, base_coin_id)
);
CREATE INDEX organization_coins_coin_idx ON organization_coins (base_coin_id);

-- What a market maker owes for a coin, in periods that do not overlap and lie inside one of
-- its engagements for that coin (checked by the service, which holds the rule). A period is
-- identified by organization, coin and `since`, as an engagement is. Each KPI is a column,
-- null when the period does not set it, so that scoring compares plain columns row by row.
CREATE TABLE obligations (
  id uuid PRIMARY KEY,
  organization_id text COLLATE "C" NOT NULL REFERENCES organizations (id),
  base_coin_id text COLLATE "C" NOT NULL REFERENCES coins (id),
  since date NOT NULL,
  until date,
  min_bid_depth_tob double precision CHECK (min_bid_depth_tob >= 0),
  min_bid_depth_10 double precision CHECK (min_bid_depth_10 >= 0),
  min_bid_depth_25 double precision CHECK (min_bid_depth_25 >= 0),
  min_bid_depth_50 double precision CHECK (min_bid_depth_50 >= 0),
  min_bid_depth_100 double precision CHECK (min_bid_depth_100 >= 0),
  min_bid_depth_200 double precision CHECK (min_bid_depth_200 >= 0),
  min_ask_depth_tob double precision CHECK (min_ask_depth_tob >= 0),
  min_ask_depth_10 double precision CHECK (min_ask_depth_10 >= 0),
  min_ask_depth_25 double precision CHECK (min_ask_depth_25 >= 0),
  min_ask_depth_50 double precision CHECK (min_ask_depth_50 >= 0),
  min_ask_depth_100 double precision CHECK (min_ask_depth_100 >= 0),
  min_ask_depth_200 double precision CHECK (min_ask_depth_200 >= 0),
  max_bid_ask_spread double precision CHECK (max_bid_ask_spread >= 0),
  min_top_of_book_percentage double precision CHECK (min_top_of_book_percentage >= 0),
  min_order_fill_volume_maker double precision CHECK (min_order_fill_volume_maker >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (until IS NULL OR until >= since),
  UNIQUE (organization_id, base_coin_id, since)
);
CREATE INDEX obligations_coin_idx ON obligations (base_coin_id, organization_id, since);

-- The markets a period requires reported every day, named as reports are stored (after
-- routing): `quote_key` is the record key's quote (coin id, or upper-cased fiat symbol).
CREATE TABLE obligation_markets (
  obligation_id uuid NOT NULL REFERENCES obligations (id) ON DELETE CASCADE,
  exchange_id text COLLATE "C" NOT NULL,
  quote_key text COLLATE "C" NOT NULL,
  instrument_type text COLLATE "C" NOT NULL CHECK (instrument_type IN ('spot', 'perp')),
  PRIMARY KEY (obligation_id, exchange_id, quote_key, instrument_type)
);
