-- A rejected submission's stored problems (the first 1,000, in the order answered) as one JSON
-- array in its log row, not one row each: a rejected batch of 300 records used to write 300
-- rows and 300 index entries, the larger part of what a stream of rejected submissions cost
-- the database beside accepted ingest (issue 15's benchmark). The array is `json` (kept as
-- written, in order); each element is {"path": text or null, "message": text, "code": text}.
-- submission_problem_counts (exact counts by code and field) stays as it is.
ALTER TABLE submissions ADD COLUMN problems json;

UPDATE submissions s SET problems = p.problems
FROM (
  SELECT submission_id,
    json_agg(json_build_object('path', path, 'message', message, 'code', code) ORDER BY ordinal)
      AS problems
  FROM submission_problems
  GROUP BY submission_id
) p
WHERE p.submission_id = s.id;

DROP TABLE submission_problems;
