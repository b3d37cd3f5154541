-- Read-your-writes with a read replica (README "Read replica"): the WAL position at which the
-- key's last write had committed on the primary. Authentication reads it with the key, so a
-- process that has never seen the key still knows whether the replica has replayed that far.
alter table api_keys add column last_write_lsn pg_lsn;
