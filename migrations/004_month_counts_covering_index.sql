-- The listing sums report_month_counts for every engaged coin of an organization; with `n` in
-- the index that sum is an index-only scan instead of a heap visit per (coin, month) row.
CREATE UNIQUE INDEX report_month_counts_key_idx
  ON report_month_counts (organization_id, base_coin_id, month) INCLUDE (n);
ALTER TABLE report_month_counts DROP CONSTRAINT report_month_counts_pkey;
