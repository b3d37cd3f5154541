/**
 * Who is asking: the organization whose reports a request may read and write, and the API
 * key it authenticated with (null for work the operator runs without a key).
 */
export type Caller = { organizationId: string; apiKeyId: string | null };
