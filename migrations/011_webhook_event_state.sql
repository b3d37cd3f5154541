-- The state of the job that derives report.missing, report.late and kpi.missed from stored
-- data (CONTRACT section 7, docs/notifications-events.md). Every `serve` process runs it; an
-- advisory transaction lock lets one of them do a pass at a time, and everything below is
-- read and written inside that pass's transaction.

-- One row, written by the first pass ever made: deadlines that passed before it are never
-- announced (`first_day`: the first day whose deadline was still ahead), every day up to
-- `deadlines_done` has been judged once its deadline passed, and every report version up to
-- `versions_seen` has been judged, but for the ids in webhook_version_holes.
CREATE TABLE webhook_event_producer (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  started_at timestamptz NOT NULL,
  first_day date NOT NULL,
  deadlines_done date NOT NULL,
  versions_seen bigint NOT NULL
);

-- Version ids below `versions_seen` that a pass did not see: a transaction still in flight
-- drew them (identity values are drawn in one order and committed in another), or one that
-- rolled back. `noted_xmax` is pg_snapshot_xmax of the pass that noted the hole: once the
-- oldest transaction still running is not older than it, the writer of the id has ended, and
-- a hole still empty then is dropped (its transaction rolled back).
CREATE TABLE webhook_version_holes (
  id bigint PRIMARY KEY,
  noted_xmax bigint NOT NULL
);

-- The last kpi.missed outcome of each obligation market and day: the failed KPIs last
-- announced (empty: judged met since, so that missing the same KPIs again is announced
-- again), and how many kpi.missed were sent for the day (the next one's dedup key).
CREATE TABLE webhook_kpi_outcomes (
  organization_id text COLLATE "C" NOT NULL,
  base_coin_id text COLLATE "C" NOT NULL,
  exchange_id text COLLATE "C" NOT NULL,
  quote_key text COLLATE "C" NOT NULL,
  instrument_type text COLLATE "C" NOT NULL,
  date date NOT NULL,
  failed_kpis text[] NOT NULL,
  announced integer NOT NULL,
  PRIMARY KEY (organization_id, base_coin_id, date, exchange_id, quote_key, instrument_type)
);

-- Obligation periods and engagements that changed (inserted, updated or deleted), noted by
-- triggers in the transaction of the change: whoever writes them (CLI, fixture, ending an
-- engagement), the days they cover are judged again on the next pass, and the row deleted.
-- `until` null: open-ended.
CREATE TABLE webhook_obligation_changes (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  organization_id text COLLATE "C" NOT NULL,
  base_coin_id text COLLATE "C" NOT NULL,
  since date NOT NULL,
  until date
);

CREATE FUNCTION webhook_note_period_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    INSERT INTO webhook_obligation_changes (organization_id, base_coin_id, since, until)
    VALUES (OLD.organization_id, OLD.base_coin_id, OLD.since, OLD.until);
  END IF;
  IF TG_OP <> 'DELETE' THEN
    INSERT INTO webhook_obligation_changes (organization_id, base_coin_id, since, until)
    VALUES (NEW.organization_id, NEW.base_coin_id, NEW.since, NEW.until);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER obligations_webhook_changes AFTER INSERT OR UPDATE OR DELETE ON obligations
  FOR EACH ROW EXECUTE FUNCTION webhook_note_period_change();
CREATE TRIGGER engagements_webhook_changes AFTER INSERT OR UPDATE OR DELETE ON engagements
  FOR EACH ROW EXECUTE FUNCTION webhook_note_period_change();

-- A period's markets changed: its whole period is judged again. (When the period itself is
-- deleted, its trigger noted it; the lookup below then finds nothing.)
CREATE FUNCTION webhook_note_market_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed uuid;
BEGIN
  IF TG_OP = 'DELETE' THEN
    changed := OLD.obligation_id;
  ELSE
    changed := NEW.obligation_id;
  END IF;
  INSERT INTO webhook_obligation_changes (organization_id, base_coin_id, since, until)
  SELECT o.organization_id, o.base_coin_id, o.since, o.until FROM obligations o WHERE o.id = changed;
  RETURN NULL;
END
$$;

CREATE TRIGGER obligation_markets_webhook_changes
  AFTER INSERT OR UPDATE OR DELETE ON obligation_markets
  FOR EACH ROW EXECUTE FUNCTION webhook_note_market_change();
