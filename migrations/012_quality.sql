-- Data quality (CONTRACT section 6).

-- The quality flags of each stored version, as a bitmask (src/domain/quality.ts names the
-- bits): a smallint costs the ingest two bytes a row and no array handling. The flags of a
-- report are recomputed when the public depth of its market and day changes; a version keeps
-- the flags it had when it was stored.
ALTER TABLE reports ADD COLUMN quality_flags smallint NOT NULL DEFAULT 0;
ALTER TABLE report_versions ADD COLUMN quality_flags smallint NOT NULL DEFAULT 0;

-- Public depth of a market, as CoinGecko's exchange tickers (depth=true) reported it: every
-- snapshot taken is kept here...
CREATE TABLE public_depth_snapshots (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  exchange_id text COLLATE "C" NOT NULL,
  base_coin_id text COLLATE "C" NOT NULL,
  instrument_type text COLLATE "C" NOT NULL CHECK (instrument_type IN ('spot', 'perp')),
  quote_symbol text COLLATE "C" NOT NULL CHECK (quote_symbol = upper(quote_symbol)),
  quote_coin_id text COLLATE "C",
  day date NOT NULL,
  taken_at timestamptz NOT NULL,
  cost_to_move_up_usd double precision CHECK (cost_to_move_up_usd >= 0),
  cost_to_move_down_usd double precision CHECK (cost_to_move_down_usd >= 0),
  bid_ask_spread_percentage double precision,
  volume_usd double precision CHECK (volume_usd >= 0),
  source text NOT NULL CHECK (source IN ('coingecko', 'fixture')),
  UNIQUE (exchange_id, base_coin_id, instrument_type, quote_symbol, taken_at)
);

-- ...and the latest of each market and UTC day is the one the flags compare with.
CREATE TABLE public_depth_days (
  exchange_id text COLLATE "C" NOT NULL,
  base_coin_id text COLLATE "C" NOT NULL,
  instrument_type text COLLATE "C" NOT NULL,
  quote_symbol text COLLATE "C" NOT NULL,
  day date NOT NULL,
  quote_coin_id text COLLATE "C",
  taken_at timestamptz NOT NULL,
  cost_to_move_up_usd double precision,
  cost_to_move_down_usd double precision,
  bid_ask_spread_percentage double precision,
  volume_usd double precision,
  PRIMARY KEY (exchange_id, base_coin_id, instrument_type, day, quote_symbol)
);

-- Reports and versions stored before this migration get the plausibility flags now, by the
-- rules of src/domain/quality.ts written out in SQL (new versions get them from that module,
-- at ingest). Only flagged rows are written.
CREATE FUNCTION pg_temp.plausibility_flags(r report_versions) RETURNS smallint
LANGUAGE sql IMMUTABLE AS $$
  SELECT (
    CASE WHEN coalesce(r.bid_depth_10 < r.bid_depth_tob, false)
      OR coalesce(r.bid_depth_25 < greatest(r.bid_depth_tob, r.bid_depth_10), false)
      OR r.bid_depth_50 < greatest(r.bid_depth_tob, r.bid_depth_10, r.bid_depth_25)
      OR r.bid_depth_100 < greatest(r.bid_depth_tob, r.bid_depth_10, r.bid_depth_25, r.bid_depth_50)
      OR r.bid_depth_200 < greatest(r.bid_depth_tob, r.bid_depth_10, r.bid_depth_25, r.bid_depth_50, r.bid_depth_100)
      OR coalesce(r.ask_depth_10 < r.ask_depth_tob, false)
      OR coalesce(r.ask_depth_25 < greatest(r.ask_depth_tob, r.ask_depth_10), false)
      OR r.ask_depth_50 < greatest(r.ask_depth_tob, r.ask_depth_10, r.ask_depth_25)
      OR r.ask_depth_100 < greatest(r.ask_depth_tob, r.ask_depth_10, r.ask_depth_25, r.ask_depth_50)
      OR r.ask_depth_200 < greatest(r.ask_depth_tob, r.ask_depth_10, r.ask_depth_25, r.ask_depth_50, r.ask_depth_100)
    THEN 1 ELSE 0 END
    | CASE WHEN abs(r.bid_ask_depth_50 - (r.bid_depth_50 + r.ask_depth_50)) > 0.01 * (r.bid_depth_50 + r.ask_depth_50)
      OR abs(r.bid_ask_depth_100 - (r.bid_depth_100 + r.ask_depth_100)) > 0.01 * (r.bid_depth_100 + r.ask_depth_100)
      OR abs(r.bid_ask_depth_200 - (r.bid_depth_200 + r.ask_depth_200)) > 0.01 * (r.bid_depth_200 + r.ask_depth_200)
    THEN 2 ELSE 0 END
    | CASE WHEN coalesce(r.order_fill_volume_maker_tob > r.order_fill_volume_maker, false) THEN 4 ELSE 0 END
  )::smallint
$$;
UPDATE report_versions v SET quality_flags = pg_temp.plausibility_flags(v)
WHERE pg_temp.plausibility_flags(v) <> 0;
UPDATE reports r SET quality_flags = v.quality_flags
FROM (SELECT DISTINCT ON (report_id) report_id, quality_flags FROM report_versions
      ORDER BY report_id, id DESC) v
WHERE v.report_id = r.id AND v.quality_flags <> 0;
