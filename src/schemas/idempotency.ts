import { z } from "zod";

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** `Idempotency-Key` (CONTRACT section 5): 1 to 255 printable ASCII characters. */
export const idempotencyKeySchema = z
  .string()
  .min(1)
  .max(MAX_IDEMPOTENCY_KEY_LENGTH)
  .regex(/^[\x20-\x7E]*$/)
  .meta({
    description:
      "1 to 255 printable ASCII characters, scoped to the organization and kept 24 hours. A repeat of a request answered 201, with the same key, body, API version and `x-dry-run`, gets that answer again, byte for byte, with `idempotent-replayed: true`, and changes nothing. The key with a different request: 422; while the first request is in flight: 409. Other answers are not kept: a corrected request may reuse the key.",
    example: "batch-2026-11-22-0001",
  });
