/**
 * How many shards a month count is spread over (migration 021), and the advisory lock space
 * a batch claims one in: the organization's hash with the shard in its low bits.
 */
const SHARDS = 8;
const LOCK_SPACE = 1_900_021;

/**
 * The batch upsert's CTEs that add its new reports (`upserted` rows with `created`) to
 * report_month_counts. They go to the first shard whose advisory lock the batch takes without
 * waiting, held to its commit: batches of one organization in flight together never queue on
 * the same count rows (each waited for the other's commit, WAL flush included), and a batch
 * alone uses shard 0. With every shard taken it picks one by its submission id ($4) and waits
 * there, as every batch did before. $1 is the organization.
 */
export const monthCountsSql = `
  count_shard as (
    select coalesce(
      (select s from generate_series(0, ${SHARDS - 1}) s
        where pg_try_advisory_xact_lock(${LOCK_SPACE}, (hashtext($1::text) & -${SHARDS}) | s)
        limit 1),
      get_byte(uuid_send($4::uuid), 0) % ${SHARDS}) as shard
  ),
  counted as (
    insert into report_month_counts as c (organization_id, base_coin_id, month, shard, n)
    select $1::text, base_coin_id, date_trunc('month', date)::date,
      (select shard from count_shard), count(*)
    from upserted where created
    group by base_coin_id, date_trunc('month', date)
    order by base_coin_id, date_trunc('month', date)
    on conflict (organization_id, base_coin_id, month, shard) do update set n = c.n + excluded.n
  ),`;
