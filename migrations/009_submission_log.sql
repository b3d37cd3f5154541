-- The submission log (CONTRACT section 5): every authenticated request to a submission
-- endpoint, accepted or rejected, dry run or not. Until now `submissions` held accepted ones
-- only; rows written before this migration are accepted ones, hence the defaults.
ALTER TABLE submissions
  ADD COLUMN status text NOT NULL DEFAULT 'accepted' CHECK (status IN ('accepted', 'rejected')),
  ADD COLUMN problem_count integer NOT NULL DEFAULT 0 CHECK (problem_count >= 0),
  ADD COLUMN idempotency_key text;

-- The purge (SUBMISSION_LOG_DAYS) and the report card's month walk the log by time across
-- organizations.
CREATE INDEX submissions_submitted_at_idx ON submissions (submitted_at);

-- The problems a rejected submission answered, in the order answered: the first 1,000 of
-- them (submissions.problem_count holds the exact count). Never a reported value beyond what
-- the problem's message itself quotes. report_versions.submission_id refers to submissions by
-- id without a foreign key on purpose: purging old log rows never touches a report version.
CREATE TABLE submission_problems (
  submission_id uuid NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
  ordinal integer NOT NULL,
  path text,
  message text NOT NULL,
  code text NOT NULL,
  PRIMARY KEY (submission_id, ordinal)
);

-- Every problem of a rejected submission counted by code and field, exact whatever the cap
-- above: the report card's "problems by code and by field".
CREATE TABLE submission_problem_counts (
  submission_id uuid NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
  code text NOT NULL,
  field text NOT NULL,
  n integer NOT NULL CHECK (n > 0),
  PRIMARY KEY (submission_id, code, field)
);
