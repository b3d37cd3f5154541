import { MAX_V1_BATCH, MAX_V2_BATCH } from "../../schemas/report.js";

export type SubmissionVersion = "v1" | "v2";

/** Records per request the service accepts (contract section 2). */
export const BATCH_LIMITS: Readonly<Record<SubmissionVersion, number>> = {
  v1: MAX_V1_BATCH,
  v2: MAX_V2_BATCH,
};

/** A problem the service reported for one record; `index` is zero-based in the whole input. */
export type Rejection = {
  index: number;
  field?: string;
  message: string;
  /** Another record the message refers to (for a duplicate key, the earlier record). */
  related?: number;
};

/** A batch that was not stored for a reason other than problems with its records. */
export type FailedBatch = {
  batch: number;
  offset: number;
  size: number;
  status?: number;
  message: string;
  /**
   * True when an attempt's answer was lost (the connection closed after the request went out,
   * a timeout, an unreadable answer, a 5xx other than 503, a 409): the service may have stored
   * the batch. Never in a dry run.
   */
  mayBeStored?: boolean;
  /** True for batches left unsent: the service refused the API key, or (`stopAfterFailure`) an earlier batch was not stored. */
  notSent?: boolean;
};

/** `replayed`: stored by an earlier run's identical batch; the service answered that batch's 201. */
export type BatchOutcome = "accepted" | "replayed" | "rejected" | "failed" | "skipped";

export type BatchReport = {
  batch: number;
  batches: number;
  offset: number;
  size: number;
  outcome: BatchOutcome;
  attempts: number;
};

export type RetryNotice = {
  batch: number;
  attempt: number;
  delayMs: number;
  reason: string;
};

export type SubmitBatchesOptions = {
  url: string;
  key: string;
  version: SubmissionVersion;
  dryRun: boolean;
  records: readonly unknown[];
  /** Defaults to, and may not exceed, the version's limit. */
  batchSize?: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  /**
   * Retries per batch after the first attempt (429, 408, 5xx, network errors). Default 4.
   * A 409 (the batch's Idempotency-Key in flight) is retried apart, for the key's lease.
   */
  maxRetries?: number;
  /** Per-attempt timeout. Default 60 s. */
  timeoutMs?: number;
  /** Mixed into every batch's Idempotency-Key: keys of one run only (`--fresh-keys`). */
  keySalt?: string;
  /** Sends no batch after one that was not stored (`--all-or-nothing`'s storing pass). */
  stopAfterFailure?: boolean;
  /** Filled in as batches are answered (else a new one): what an interrupted run had done. */
  result?: SubmitResult;
  onBatch?: (report: BatchReport) => void;
  onRetry?: (notice: RetryNotice) => void;
};

export type SubmitResult = {
  created: number;
  updated: number;
  /** Every record problem, in record order; a record may have several. */
  rejected: Rejection[];
  /** Batches refused because of record problems (atomic: none of their records stored). */
  rejectedBatches: number;
  /** Records of rejected batches that had no problem of their own yet were not stored. */
  notStored: number;
  /**
   * Problems the service did not list (it lists MAX_PROBLEMS_PER_RESPONSE a batch): their
   * records are counted in `notStored`, not named.
   */
  unlistedProblems: number;
  failedBatches: FailedBatch[];
  /**
   * Batches an earlier run (or another run at once) stored: answered from its kept 201, so this
   * run changed nothing, and their counts are not in `created`/`updated`. A kept answer
   * replayed to this run's own retry (its first answer lost) is counted as accepted.
   */
  replayedBatches: number;
  /** The records of `replayedBatches`. */
  replayedRecords: number;
  /** Set when the service refused the API key (401): later batches were not sent. */
  unauthorized?: string;
  /**
   * Set when a batch's retries ended with the service out of reach (connection refused, DNS,
   * TLS) or its submission route not found (404): later batches were not sent.
   */
  unreachable?: { reason: string; detail: string };
};
