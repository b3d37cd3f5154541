-- A manual retry (POST .../retry) is one attempt more, never one of the retry schedule's
-- (README "Notifications", "Manual retry"). `manual_attempts`: attempts made by hand, left out
-- when the schedule's next delay is chosen. `resume_at`: a pending delivery retried by hand
-- before its next scheduled attempt keeps that attempt's time here; the manual attempt, if it
-- fails, makes it due at that time again. Recording an attempt clears it.
ALTER TABLE webhook_deliveries ADD COLUMN manual_attempts integer NOT NULL DEFAULT 0;
ALTER TABLE webhook_deliveries ADD COLUMN resume_at timestamptz;
