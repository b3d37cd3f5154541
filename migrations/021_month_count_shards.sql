-- Concurrent batches of one organization used to queue on report_month_counts: a batch of
-- new reports adds to the (organization, coin, month) rows of every coin it covers, and the
-- next batch of the same coins waited for that row lock until the first had committed (its
-- WAL flush included), so parallel submissions of one market maker ran one after another
-- (issue 19). A count is now spread over `shard`s: a batch adds to the first shard no other
-- batch of its organization holds at that moment (an advisory lock taken without waiting,
-- see report-store.ts), so batches in flight together write different rows. A batch alone
-- always takes shard 0, so the rows the listing sums grow only with how many batches of an
-- organization ran at once. The listing's count sums `n` over every shard.
ALTER TABLE report_month_counts
  ADD COLUMN shard smallint NOT NULL DEFAULT 0 CHECK (shard >= 0 AND shard < 8);
DROP INDEX report_month_counts_key_idx;
CREATE UNIQUE INDEX report_month_counts_key_idx
  ON report_month_counts (organization_id, base_coin_id, month, shard) INCLUDE (n);
