import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SRC, sourceFiles } from "./helpers/source-rules.js";

// README "PgBouncer": in transaction mode each transaction may run on another server
// connection, so no session state may outlive one. The cluster suite runs the submission
// tests through PgBouncer; this keeps the code from growing what those tests might miss.
const SESSION_STATE = [
  {
    rule: "session advisory locks (use the _xact_ ones)",
    pattern: /pg_(try_)?advisory_lock(_shared)?\s*\(/,
  },
  { rule: "advisory unlocks (a transaction lock ends with it)", pattern: /pg_advisory_unlock/ },
  { rule: "LISTEN (a notification goes to one server connection)", pattern: /\blisten\s+[a-z_"]/i },
  {
    rule: "session SET (use SET LOCAL or set_config(…, true))",
    pattern: /(^|[`;(]\s*)set\s+(session\s+)?(?!local\b)[a-z_.]+\s*(=|to\b)/im,
  },
  { rule: "set_config for the session", pattern: /set_config\([^)]*,\s*false\s*\)/ },
  {
    // prepared-statements.ts sends them while DB_PREPARED_STATEMENTS allows, and turns them
    // off at the first one a pooler lost; nothing else may name a statement.
    rule: "named prepared statements (outside prepared-statements.ts)",
    pattern: /\bprepare\s+[a-z_]+\s+(as|\()|\bname(:\s*["'`a-z_][^,]*)?,\s*text\b/i,
    except: "store/prepared-statements.ts",
  },
  {
    rule: "temporary tables outside a transaction's life",
    pattern: /create\s+temp(orary)?\s+table(?![^;]*on\s+commit\s+drop)/i,
  },
];

describe("no session state across transactions (PgBouncer in transaction mode)", () => {
  const files = sourceFiles().filter((f) => f.startsWith("store/") || f.startsWith("jobs/"));

  it("finds the store files", () => {
    expect(files).toContain("store/stores.ts");
  });

  for (const { rule, pattern, except } of SESSION_STATE) {
    it(`no ${rule}`, () => {
      const offenders = files.filter(
        (f) => f !== except && pattern.test(readFileSync(join(SRC, f), "utf8")),
      );
      expect(offenders).toEqual([]);
    });
  }

  it("catches what it is meant to catch", () => {
    const samples = [
      "select pg_advisory_lock(1)",
      "listen report_events",
      "`set statement_timeout = 0`",
      "select set_config('work_mem', '64MB', false)",
      "create temp table t (x int)",
      'client.query({ name: "insert-report", text: "insert into reports" })',
      "super.query({ name, text, values })",
    ];
    for (const sample of samples) {
      expect(
        SESSION_STATE.some(({ pattern }) => pattern.test(sample)),
        sample,
      ).toBe(true);
    }
    const allowed = [
      "select pg_advisory_xact_lock(1)",
      "`set local statement_timeout = 0`",
      "update webhook_deliveries set status = 'failed'",
      "on conflict do update set n = c.n + excluded.n",
      "select set_config('jit', 'off', true)",
      '{ name: "date", type: "date", of: (r) => r.date }',
    ];
    for (const sample of allowed) {
      expect(
        SESSION_STATE.some(({ pattern }) => pattern.test(sample)),
        sample,
      ).toBe(false);
    }
  });
});
