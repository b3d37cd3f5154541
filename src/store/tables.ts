import type { ColumnType, Generated } from "kysely";

/** Row types of the tables in `migrations/`, for Kysely. Column names as in SQL. */
export type Tables = {
  coins: { id: string; symbol: string; name: string };
  exchanges: {
    id: string;
    name: string;
    spot: boolean;
    derivatives: boolean;
    market_data: boolean;
    exchange_group: string;
  };
  markets: {
    exchange_id: string;
    base_coin_id: string;
    instrument_type: string;
    quote_symbol: string;
    quote_coin_id: string | null;
    collected_since: string;
  };
  reference_data_version: {
    singleton: boolean;
    version: number;
    changed_at: Date | null;
    synced_at: Date | null;
  };
  rate_limit_windows: { name: string; key: string; count: number; resets_at: Date };
  organizations: { id: string; name: string; kind: Generated<string>; created_at: Generated<Date> };
  organization_coins: { organization_id: string; base_coin_id: string };
  obligations: {
    id: string;
    organization_id: string;
    base_coin_id: string;
    since: string;
    until: string | null;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
  } & Record<KpiColumn, number | null>;
  obligation_markets: {
    obligation_id: string;
    exchange_id: string;
    quote_key: string;
    instrument_type: string;
  };
  api_keys: {
    id: string;
    organization_id: string;
    key_hash: string;
    prefix: string;
    label: string;
    created_at: Generated<Date>;
    revoked_at: Date | null;
    last_used_at: Date | null;
    last_write_lsn: string | null;
  };
  engagements: {
    id: string;
    organization_id: string;
    base_coin_id: string;
    type: string;
    since: string;
    until: string | null;
  };
  submissions: {
    id: string;
    organization_id: string;
    api_key_id: string | null;
    schema_version: number;
    dry_run: boolean;
    record_count: number;
    created_count: number;
    updated_count: number;
    submitted_at: Generated<Date>;
    status: Generated<"accepted" | "rejected">;
    problem_count: Generated<number>;
    idempotency_key: string | null;
    /** A rejected submission's stored problems, in order (migration 015); null otherwise. */
    problems: ColumnType<unknown, string | null | undefined, never>;
  };
  submission_problem_counts: {
    submission_id: string;
    code: string;
    field: string;
    n: number;
  };
  webhooks: {
    id: string;
    organization_id: string;
    url: string;
    events: string[];
    description: string | null;
    secret: string;
    /** `[{secret, expiresAt}]`, newest first (domain PreviousSecret, dates as text). */
    previous_secrets: Generated<unknown>;
    disabled: Generated<boolean>;
    failing_since: Generated<Date | null>;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
  };
  webhook_events: {
    id: string;
    type: string;
    organization_id: string;
    base_coin_id: string | null;
    webhook_id: string | null;
    data: unknown;
    occurred_at: Date;
    dedup_key: string | null;
    created_at: Generated<Date>;
  };
  webhook_deliveries: {
    id: string;
    webhook_id: string;
    event_id: string;
    status: Generated<string>;
    attempts: Generated<number>;
    next_attempt_at: Date | null;
    last_attempt_at: Date | null;
    last_status_code: number | null;
    last_error: string | null;
    claimed_until: Generated<Date | null>;
    created_at: Generated<Date>;
  };
  dashboard_sessions: {
    token_hash: string;
    api_key_id: string;
    created_at: Date;
    last_seen_at: Date;
  };
  reports: ReportRow;
  report_versions: Record<string, unknown> & { id: Generated<number>; report_id: number };
};

export type ReportRow = {
  id: Generated<number>;
  organization_id: string;
  date: string;
  exchange_id: string;
  base_coin_id: string;
  quote_key: string;
  instrument_type: string;
  quote_coin_id: string | null;
  quote_coin_symbol: string | null;
  type: string | null;
  schema_version: number;
  eligibility_status: string;
  eligibility_reason: string | null;
  /** Bitmask of src/domain/quality.ts. */
  quality_flags: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
} & Record<MetricColumn, number | null>;

/** An obligation's KPI column: `min_bid_depth_200` for the KPI `minBidDepth200`. */
export type KpiColumn = `${"min" | "max"}_${string}`;

export type MetricColumn = `${"bid" | "ask" | "bid_ask" | "order" | "top"}_${string}`;
