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

/** The non-secret start of a key, stored to let people tell their keys apart. */
export function apiKeyPrefix(key: string): string {
  return key.slice(0, PREFIX_LENGTH);
}

/** Reads the key from an Authorization header value: the key itself, or `Bearer <key>`. */
export function keyFromAuthorization(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  const bearer = /^bearer\s+(.+)$/i.exec(value);
  const key = (bearer?.[1] ?? value).trim();
  return key === "" ? undefined : key;
}
