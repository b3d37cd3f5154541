-- A batch of new reports used to add to the (organization, coin, month) count of every coin
-- and month it covered: about as many row updates as reports when a batch spans many coins,
-- the largest single cost of storing a batch (issue 19). A batch now writes one row here, its
-- new reports counted per (coin, month) in three parallel arrays. The listing sums
-- report_month_counts plus the rows not yet folded in; serve folds them in every half second
-- (month-counts.ts), deleting them in the statement that adds them to report_month_counts,
-- so that every snapshot counts each batch exactly once.
CREATE TABLE report_month_count_deltas (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  organization_id text NOT NULL,
  base_coin_ids text[] NOT NULL,
  months date[] NOT NULL,
  ns integer[] NOT NULL,
  CHECK (cardinality(base_coin_ids) = cardinality(months)
    AND cardinality(months) = cardinality(ns))
);
CREATE INDEX report_month_count_deltas_organization_idx
  ON report_month_count_deltas (organization_id);
