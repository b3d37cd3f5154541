import { loadConfig } from "../../src/config.js";
import { loadFixture } from "../../src/services/fixtures.js";
import { createSystem, type System } from "../../src/system.js";
import { freshDatabase, type TestDatabase } from "./database.js";
import { baseFixture } from "./fixture.js";

export const METRICS_TOKEN = "metrics-token-0123456789abcdef";

/** The whole system (as `serve` builds it) on a fresh database with the base fixture. */
export async function startMetricsSystem(
  env: Record<string, string>,
  options: { replicaLagSeconds?: () => number } = {},
): Promise<{ system: System; database: TestDatabase }> {
  const database = await freshDatabase();
  await loadFixture(database.stores, baseFixture(), new Date());
  const config = loadConfig({ REFERENCE_DATA_CHECK_MS: "0", ...env });
  const system = await createSystem(config, { database, ...options });
  return { system, database };
}

/** The samples of a Prometheus text exposition: `name{a="x",b="y"}` (labels sorted) -> value. */
export function samplesOf(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const [, name, labelText, value] = match;
    // The text format's own spellings only: NaN, +Inf, -Inf, or a Go float.
    if (!/^(NaN|[+-]Inf|[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)$/.test(value ?? ""))
      throw new Error(`not a sample value: ${line}`);
    const labels = [...(labelText ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)]
      .map(([, k, v]) => `${k}="${v}"`)
      .sort();
    samples.set(labels.length ? `${name}{${labels.join(",")}}` : `${name}`, Number(value));
  }
  return samples;
}

/** The metric names (HELP lines) of an exposition. */
export function metricNamesOf(text: string): Set<string> {
  return new Set([...text.matchAll(/^# HELP (\S+)/gm)].map((m) => m[1] as string));
}
