-- A failed delivery retried by hand (POST .../retry) gets one more attempt, not the rest of the
-- retry schedule: `final_attempt` marks the attempt it is due for as its last, so that one
-- failing again stays `failed`. Recording an attempt clears it. (A pending delivery retried by
-- hand keeps its schedule.)
ALTER TABLE webhook_deliveries ADD COLUMN final_attempt boolean NOT NULL DEFAULT false;
