-- quality.flagged (CONTRACT section 7), derived by the webhook event producer (migration 011)
-- from report versions, whose flags it reads through its version cursor, and from the
-- recomputations of exceeds_public_depth, which note the reports they change here.

-- What the producer last judged of a report: its flags then, and how many quality.flagged
-- were sent for it (the next one's dedup key). Only reports ever flagged since notifications
-- started have a row.
CREATE TABLE webhook_quality_outcomes (
  report_id bigint PRIMARY KEY,
  flags smallint NOT NULL,
  announced integer NOT NULL
);

-- Reports whose flags a recomputation changed, noted by the statement that changed them and
-- taken (deleted) by the next pass. No index: the recomputation writes one row per change
-- and should pay as little as it can; a pass takes rows in any order, a report noted twice
-- is judged once.
CREATE TABLE webhook_quality_changes (
  report_id bigint NOT NULL
);
