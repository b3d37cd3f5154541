-- A key's prefix is shown to tell keys apart; for a key chosen by hand (a fixture key) the
-- first 12 characters can be most of the secret, so only generated `trk_` keys keep one.
UPDATE api_keys SET prefix = '' WHERE left(prefix, 4) <> 'trk_';
