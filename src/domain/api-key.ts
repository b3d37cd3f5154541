import { createHash, randomBytes } from "node:crypto";

const KEY_MARKER = "trk_";
const PREFIX_LENGTH = 12;

/** A new key: 256 random bits, readable marker, shown to its owner once. */
export function generateApiKey(): string {
  return `${KEY_MARKER}${randomBytes(32).toString("base64url")}`;
}

/**
 * Keys carry 256 bits of entropy, so a fast hash is enough (nothing to brute-force); only the
 * hash is stored.
 */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/**
 * The non-secret start of a generated key (`trk_` and 8 of its 43 random characters), stored
 * to let people tell their keys apart. A key chosen by hand (fixtures) gets none: its first
 * characters may be much of the secret.
 */
export function apiKeyPrefix(key: string): string {
  return key.startsWith(KEY_MARKER) ? key.slice(0, PREFIX_LENGTH) : "";
}

/** The shortest key a fixture may hold: shorter ones are guessable. */
export const MIN_FIXTURE_KEY_LENGTH = 32;

export type KeyCandidate = { id: string; prefix: string; label: string };

/**
 * The keys `idOrPrefix` names: the key with that id; else every key whose id, or whose stored
 * prefix, begins with it. More than one is ambiguous (the caller names them all).
 */
export function keysMatching<K extends KeyCandidate>(keys: K[], idOrPrefix: string): K[] {
  const exact = keys.filter((k) => k.id === idOrPrefix);
  if (exact.length > 0 || idOrPrefix === "") return exact;
  return keys.filter(
    (k) => k.id.startsWith(idOrPrefix) || (k.prefix !== "" && k.prefix.startsWith(idOrPrefix)),
  );
}

/** Reads the key from an Authorization header value: the key itself, or `Bearer <key>`. */
export function keyFromAuthorization(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  const bearer = /^bearer\s+(.+)$/i.exec(value);
  const key = (bearer?.[1] ?? value).trim();
  return key === "" ? undefined : key;
}

/** Why a request was not authenticated: the whole message of every 401. */
export const AUTHENTICATION_FAILURES = {
  missing: "Missing API key in the Authorization header",
  invalid: "Invalid API key",
  revoked: "API key has been revoked",
  // Node reads the first of two: a proxy reading the other would judge another caller.
  repeated: "Expected one Authorization header, received several",
} as const;
