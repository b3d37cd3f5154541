import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { INGEST_ORG, ORGANIZATIONS, orgId, orgKey, v2Batch } from "./data.js";
import { percentile, type RunningServer, runLoad, startServer } from "./server.js";

/**
 * Webhooks' cost to the API (issue 21's performance targets), measured side by side on one
 * server: ingest with 10 subscribed endpoints per organization against ingest without (target:
 * within 5 %), and the p99 of submissions and listings while 10,000 deliveries wait for a
 * receiver that takes 2 s per answer against none waiting (target: at most +10 %).
 */
export type WebhookBenchResults = {
  endpoints: number;
  ingestWithoutRecordsPerSecond: number;
  ingestWithRecordsPerSecond: number;
  ingestRatio: number;
  pendingDeliveries: number;
  submitP99Ms: { idle: number; pending: number; ratio: number };
  listP99Ms: { idle: number; pending: number; ratio: number };
};

const ENDPOINTS_PER_ORGANIZATION = 10;
const SLOW_ANSWER_MS = 2_000;
const BATCH = 300;
/** Offsets of the record ids each phase submits (apart from the ingest suite's). */
const REGION = 6_000_000;

type Plan = { batches: number; pending: number; requests: number };

export async function webhookSuite(
  env: Record<string, string>,
  fixtureFile: string,
  quick: boolean,
  log: (line: string) => void,
): Promise<WebhookBenchResults> {
  const plan: Plan = quick
    ? { batches: 8, pending: 1_000, requests: 40 }
    : { batches: 60, pending: 10_000, requests: 400 };
  const receiver = await slowReceiver();
  const server = await startServer(
    { ...env, DB_POOL_SIZE: "10", WEBHOOK_ALLOW_INSECURE: "true" },
    fixtureFile,
  );
  try {
    let offset = REGION;
    const ingest = async () => {
      const requests = Array.from({ length: plan.batches }, (_, b) => ({
        method: "POST" as const,
        path: "/api/v2/report",
        body: JSON.stringify({ data: v2Batch(b, BATCH, offset) }),
      }));
      offset += 1_000_000;
      const r = await load(server, orgKey(INGEST_ORG), requests, 4, 201);
      return Math.round((plan.batches * BATCH) / (r.elapsedMs / 1000));
    };
    await ingest(); // warm-up: not counted
    const without = (await ingest()) / 2;
    const ids = await subscribeAll(server, receiver.url);
    const withEndpoints = await ingest();
    await setDisabled(server, ids, true);
    const withoutAgain = (await ingest()) / 2;
    await setDisabled(server, ids, false);
    const ingestWithout = Math.round(without + withoutAgain);
    log(`  webhooks: ingest ${ingestWithout} records/s without, ${withEndpoints} with endpoints`);

    const idle = await submitAndList(server, plan, () => (offset += 1_000_000));
    await queueTests(server, ids, plan.pending);
    const pending = await submitAndList(server, plan, () => (offset += 1_000_000));
    log(
      `  webhooks: p99 submit ${idle.submit} -> ${pending.submit} ms, list ${idle.list} -> ${pending.list} ms with ${plan.pending} pending`,
    );
    const ratio = (a: number, b: number) => Math.round((b / a) * 1000) / 1000;
    return {
      endpoints: ids.length,
      ingestWithoutRecordsPerSecond: ingestWithout,
      ingestWithRecordsPerSecond: withEndpoints,
      ingestRatio: ratio(ingestWithout, withEndpoints),
      pendingDeliveries: plan.pending,
      submitP99Ms: {
        idle: idle.submit,
        pending: pending.submit,
        ratio: ratio(idle.submit, pending.submit),
      },
      listP99Ms: { idle: idle.list, pending: pending.list, ratio: ratio(idle.list, pending.list) },
    };
  } finally {
    await server.stop();
    await new Promise((done) => receiver.server.close(done));
  }
}

async function load(
  server: RunningServer,
  key: string,
  requests: { method: "GET" | "POST"; path: string; body?: string }[],
  concurrency: number,
  expectStatus: number,
) {
  const r = await runLoad({ origin: server.origin, key, requests, concurrency, expectStatus });
  if (r.errorCount > 0) throw new Error(`${r.errorCount} unexpected answers, e.g. ${r.errors[0]}`);
  return r;
}

/** 10 endpoints for each market maker, all on the slow receiver. */
async function subscribeAll(
  server: RunningServer,
  url: string,
): Promise<{ org: string; id: string }[]> {
  const ids: { org: string; id: string }[] = [];
  for (let o = 0; o < ORGANIZATIONS; o++) {
    for (let e = 0; e < ENDPOINTS_PER_ORGANIZATION; e++) {
      const response = await fetch(`${server.origin}/api/v1/webhooks`, {
        method: "POST",
        headers: { authorization: orgKey(orgId(o)), "content-type": "application/json" },
        body: JSON.stringify({ url: `${url}/${o}/${e}`, events: ["*"] }),
      });
      if (response.status !== 201) throw new Error(`subscribe: ${response.status}`);
      ids.push({ org: orgId(o), id: ((await response.json()) as { id: string }).id });
    }
  }
  return ids;
}

async function setDisabled(
  server: RunningServer,
  ids: { org: string; id: string }[],
  disabled: boolean,
) {
  for (const { org, id } of ids) {
    await fetch(`${server.origin}/api/v1/webhooks/${id}`, {
      method: "PATCH",
      headers: { authorization: orgKey(org), "content-type": "application/json" },
      body: JSON.stringify({ disabled }),
    });
  }
}

/** `count` webhook.test deliveries, spread over the endpoints: they wait on the slow receiver. */
async function queueTests(
  server: RunningServer,
  ids: { org: string; id: string }[],
  count: number,
) {
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < count; i = next++) {
        const { org, id } = ids[i % ids.length] as { org: string; id: string };
        const response = await fetch(`${server.origin}/api/v1/webhooks/${id}/test`, {
          method: "POST",
          headers: { authorization: orgKey(org) },
        });
        if (response.status !== 202) throw new Error(`test: ${response.status}`);
      }
    }),
  );
}

async function submitAndList(server: RunningServer, plan: Plan, nextOffset: () => number) {
  const offset = nextOffset();
  const submissions = Array.from({ length: plan.requests / 4 }, (_, b) => ({
    method: "POST" as const,
    path: "/api/v2/report",
    body: JSON.stringify({ data: v2Batch(b, 50, offset) }),
  }));
  const listings = Array.from({ length: plan.requests }, (_, i) => ({
    method: "GET" as const,
    path: `/api/v1/reports?pageSize=100&page=${1 + (i % 5)}`,
  }));
  const [submit, list] = await Promise.all([
    load(server, orgKey(INGEST_ORG), submissions, 2, 201),
    load(server, orgKey(orgId(7)), listings, 2, 200),
  ]);
  const p99 = (values: number[]) => Math.round(percentile(values, 99) * 10) / 10;
  return { submit: p99(submit.latencies), list: p99(list.latencies) };
}

async function slowReceiver(): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    request.resume();
    setTimeout(() => response.end("ok"), SLOW_ANSWER_MS);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export function webhookLines(target: string, w: WebhookBenchResults): string[] {
  const verdict = (ratio: number, limit: number, above: boolean) =>
    (above ? ratio >= limit : ratio <= limit) ? "met" : "missed";
  return [
    `### ${target}: webhooks (${w.endpoints} endpoints, ${w.pendingDeliveries} deliveries pending on a 2 s receiver)`,
    "",
    "| measure | without | with | ratio | target |",
    "|---|---:|---:|---:|---|",
    `| ingest records/s (10 endpoints per organization) | ${w.ingestWithoutRecordsPerSecond} | ${w.ingestWithRecordsPerSecond} | ${w.ingestRatio} | >= 0.95 (${verdict(w.ingestRatio, 0.95, true)}) |`,
    `| submission p99 ms (deliveries pending) | ${w.submitP99Ms.idle} | ${w.submitP99Ms.pending} | ${w.submitP99Ms.ratio} | <= 1.1 (${verdict(w.submitP99Ms.ratio, 1.1, false)}) |`,
    `| listing p99 ms (deliveries pending) | ${w.listP99Ms.idle} | ${w.listP99Ms.pending} | ${w.listP99Ms.ratio} | <= 1.1 (${verdict(w.listP99Ms.ratio, 1.1, false)}) |`,
    "",
  ];
}
