-- How many reports each organization has per base coin and month. The listing's totalCount
-- sums these for the whole months inside the requested range and counts only the partial
-- months at its edges row by row, so the count stays cheap however many reports there are.
-- Maintained by the batch upsert in the same statement (reports are never deleted).
CREATE TABLE report_month_counts (
  organization_id text NOT NULL,
  base_coin_id text NOT NULL,
  month date NOT NULL CHECK (extract(day FROM month) = 1),
  n bigint NOT NULL CHECK (n >= 0),
  PRIMARY KEY (organization_id, base_coin_id, month)
);

INSERT INTO report_month_counts (organization_id, base_coin_id, month, n)
SELECT organization_id, base_coin_id, date_trunc('month', date)::date, count(*)
FROM reports
GROUP BY 1, 2, 3;
