-- Market-days whose public depth changed while their reports' `exceeds_public_depth` flags
-- have not been recomputed since. Noted by the statement that stores the depth (in the load's
-- transaction), deleted by the recomputation that read the note once it has finished. A load
-- that fails, or a process that stops, between the two leaves the note here: the next depth
-- load, fixture load or `quality recompute` recomputes those days too. A day noted again
-- while a recomputation runs gets a new `note`, so that recomputation leaves it for the next.
CREATE SEQUENCE public_depth_recompute_notes;

CREATE TABLE public_depth_recompute_pending (
  exchange_id text COLLATE "C" NOT NULL,
  base_coin_id text COLLATE "C" NOT NULL,
  instrument_type text COLLATE "C" NOT NULL,
  quote_symbol text COLLATE "C" NOT NULL,
  day date NOT NULL,
  note bigint NOT NULL DEFAULT nextval('public_depth_recompute_notes'),
  PRIMARY KEY (exchange_id, base_coin_id, instrument_type, day, quote_symbol)
);
