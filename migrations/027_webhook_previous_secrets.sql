-- Several replaced secrets may stay valid at once, each until its own expiry (newest first):
-- a rotation repeated within the window (a retried request, a double click, two operators)
-- must not end the secret a receiver still holds. Replaces the single previous secret of 026.
ALTER TABLE webhooks ADD COLUMN previous_secrets jsonb NOT NULL DEFAULT '[]';
UPDATE webhooks
SET previous_secrets = jsonb_build_array(
  jsonb_build_object('secret', previous_secret, 'expiresAt', previous_secret_expires_at))
WHERE previous_secret IS NOT NULL;
ALTER TABLE webhooks DROP CONSTRAINT webhooks_previous_secret_pair;
ALTER TABLE webhooks DROP COLUMN previous_secret;
ALTER TABLE webhooks DROP COLUMN previous_secret_expires_at;
