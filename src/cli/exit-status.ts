/**
 * Where a command's action leaves its exit code for `run`, which returns it. One per run, so
 * that commands run one after another in one process (tests, a future shell) never inherit a
 * code; only `main.ts` sets the exit code of the process.
 */
export type ExitStatus = { code: number };
