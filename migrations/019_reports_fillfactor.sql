-- Room in each page of reports for new row versions (issue 16): an update that changes no
-- indexed column (a recomputed quality flag, a resubmitted report's figures) then stays in its
-- page as a heap-only tuple, with no new entry in any of the table's four indexes. It applies
-- to pages written from now on: existing pages stay full until the table is rewritten
-- (VACUUM FULL reports, or pg_repack without the exclusive lock).
ALTER TABLE reports SET (fillfactor = 90);
