-- The delivery job's claim (src/store/webhook-delivery-store.ts) looks at the oldest due
-- deliveries first; when they are all the backlog of endpoints that have as many attempts in
-- flight as allowed, it goes endpoint by endpoint instead of reading that backlog whole.

-- Each endpoint's pending deliveries in due order.
CREATE INDEX webhook_deliveries_endpoint_due_idx ON webhook_deliveries (webhook_id, next_attempt_at)
  WHERE status = 'pending';

-- Attempts in flight (leased) or whose lease a killed process left: counted per endpoint, over
-- every process, so that the per-endpoint cap holds across several `serve` processes.
CREATE INDEX webhook_deliveries_claimed_idx ON webhook_deliveries (webhook_id, claimed_until)
  WHERE claimed_until IS NOT NULL;

