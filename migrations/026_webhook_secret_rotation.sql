-- Signing-secret rotation (POST /api/v1/webhooks/{id}/rotate-secret): the secret replaced stays
-- valid until previous_secret_expires_at, and deliveries carry a signature by each valid secret
-- meanwhile (Standard Webhooks: several space-separated signatures), so that a receiver can
-- switch to the new secret without rejecting a delivery.
ALTER TABLE webhooks ADD COLUMN previous_secret text;
ALTER TABLE webhooks ADD COLUMN previous_secret_expires_at timestamptz;
ALTER TABLE webhooks ADD CONSTRAINT webhooks_previous_secret_pair
  CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL));
