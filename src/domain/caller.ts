/**
 * Organization kinds (CONTRACT section 4): a market maker submits and reads its own reports;
 * a token project reads every market maker's reports for the coins it owns; the operator
 * (the platform) reads everything. Only market makers submit.
 */
export const ORGANIZATION_KINDS = ["market_maker", "project", "operator"] as const;
export type OrganizationKind = (typeof ORGANIZATION_KINDS)[number];

/**
 * Who is asking: the organization whose reports a request may read and write, its kind (and,
 * for a project, the base coins it owns), and the API key it authenticated with (null for
 * work the operator runs without a key).
 */
export type Caller = {
  organizationId: string;
  apiKeyId: string | null;
  kind: OrganizationKind;
  /** The base coins a project owns; empty for the other kinds. */
  coins: readonly string[];
  /**
   * The position (on the primary) of the key's last committed write: its reads must see at
   * least that much (a replica that has not replayed so far is not read). Absent: none known.
   */
  readAfter?: string;
};

/** A market maker's caller, as the service's own tools and tests act for one. */
export function marketMakerCaller(organizationId: string, apiKeyId: string | null = null): Caller {
  return { organizationId, apiKeyId, kind: "market_maker", coins: [] };
}

export function maySubmit(caller: Caller): boolean {
  return caller.kind === "market_maker";
}

/**
 * What a caller may read across organizations: its own organization's records, a project's
 * coins (every market maker, for the dates it was engaged for the coin), or everything.
 */
export type ReadScope =
  | { kind: "organization"; organizationId: string }
  | { kind: "coins"; baseCoinIds: readonly string[] }
  | { kind: "all" };

export function readScope(caller: Caller): ReadScope {
  switch (caller.kind) {
    case "market_maker":
      return { kind: "organization", organizationId: caller.organizationId };
    case "project":
      return { kind: "coins", baseCoinIds: caller.coins };
    case "operator":
      return { kind: "all" };
  }
}

/**
 * Whether a scope reads what an organization owes and reports for a coin: a market maker its
 * own, a project its coins', the operator everything. A page addressed by URL outside it is
 * answered as if it did not exist.
 */
export function scopeReads(scope: ReadScope, organizationId: string, baseCoinId: string): boolean {
  switch (scope.kind) {
    case "organization":
      return scope.organizationId === organizationId;
    case "coins":
      return scope.baseCoinIds.includes(baseCoinId);
    case "all":
      return true;
  }
}

/** An organization of this kind, in words: "a project organization", "an operator organization". */
export function organizationOfKind(kind: string): string {
  return `${kind === "operator" ? "an" : "a"} ${kind} organization`;
}
