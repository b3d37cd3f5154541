-- Foreign keys checked row by row cost a lookup (and a key-share lock) for every record of
-- every batch. Both of these are guaranteed by construction instead: a report's organization
-- is the authenticated caller's, and a version row is written by the very statement that
-- returned its report's id. Reports are never deleted, so neither can dangle later.
ALTER TABLE reports DROP CONSTRAINT reports_organization_id_fkey;
ALTER TABLE report_versions DROP CONSTRAINT report_versions_report_id_fkey;
