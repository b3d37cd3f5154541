import { z } from "zod";
import { MIN_FIXTURE_KEY_LENGTH } from "../domain/api-key.js";
import { ORGANIZATION_KINDS } from "../domain/caller.js";
import { INSTRUMENT_TYPES, SUBMISSION_TYPES } from "../domain/report.js";
import { obligationPeriodSchema } from "./obligation.js";
import { depthSnapshotSchema } from "./quality.js";
import { dateSchema } from "./report.js";
import { MAX_ID_LENGTH, MAX_NAME_LENGTH, MAX_SYMBOL_LENGTH, storableText } from "./text.js";

const id = storableText(MAX_ID_LENGTH);

export const coinSchema = z.strictObject({
  id,
  symbol: storableText(MAX_SYMBOL_LENGTH),
  name: storableText(MAX_NAME_LENGTH),
});

export const exchangeSchema = z.strictObject({
  id,
  name: storableText(MAX_NAME_LENGTH),
  spot: z.boolean(),
  derivatives: z.boolean(),
  marketData: z.boolean(),
  group: id.optional(),
});

export const marketSchema = z.strictObject({
  exchangeId: id,
  baseCoinId: id,
  quoteCoinId: id.nullish(),
  quoteSymbol: storableText(MAX_SYMBOL_LENGTH),
  instrumentType: z.enum(INSTRUMENT_TYPES),
  collectedSince: dateSchema,
});

const fixtureKey = z
  .string()
  .min(
    MIN_FIXTURE_KEY_LENGTH,
    `API key must be at least ${MIN_FIXTURE_KEY_LENGTH} characters (a shorter one is guessable)`,
  )
  .max(200);

const apiKeySchema = z.union([
  fixtureKey,
  z.strictObject({
    key: fixtureKey,
    label: storableText(200, 0).optional(),
    revoked: z.boolean().optional(),
  }),
]);

const engagementShape = {
  baseCoinId: id,
  type: z.enum(SUBMISSION_TYPES),
  since: dateSchema,
  until: dateSchema.nullish(),
};

const untilNotBeforeSince = (e: { since: string; until?: string | null }) =>
  e.until == null || e.until >= e.since;
const untilProblem = { message: "until must not be before since", path: ["until"] };

export const engagementSchema = z
  .strictObject(engagementShape)
  .refine(untilNotBeforeSince, untilProblem);

/** A fixture's engagement, with what the market maker owes for the coin (CONTRACT section 4). */
const fixtureEngagementSchema = z
  .strictObject({ ...engagementShape, obligations: z.array(obligationPeriodSchema).optional() })
  .refine(untilNotBeforeSince, untilProblem);

export const organizationKindSchema = z.enum(ORGANIZATION_KINDS);

export const organizationSchema = z.strictObject({
  id,
  name: storableText(MAX_NAME_LENGTH),
  /** Absent: a market maker (CONTRACT section 4). */
  kind: organizationKindSchema.optional(),
  /** The base coins a project owns: required (non-empty) for a project, refused otherwise. */
  coins: z.array(id).optional(),
  apiKeys: z.array(apiKeySchema).default([]),
  engagements: z.array(fixtureEngagementSchema).default([]),
});

/** A new organization made by an operator: its id is also typed on command lines. */
export const newOrganizationSchema = z.object({
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "lower-case letters, digits, - and _, at most 63"),
  name: z.string().min(1).max(200),
  kind: organizationKindSchema.default("market_maker"),
  coins: z.array(id).default([]),
});

/** The fixture file of CONTRACT section 3: reference data, organizations, keys, engagements. */
export const fixtureSchema = z.strictObject({
  coins: z.array(coinSchema).default([]),
  exchanges: z.array(exchangeSchema).default([]),
  markets: z.array(marketSchema).default([]),
  organizations: z.array(organizationSchema).default([]),
  /** Public depth of markets (CONTRACT section 6), as the market-data sync keeps it. */
  depthSnapshots: z.array(depthSnapshotSchema).optional(),
});

export type Fixture = z.infer<typeof fixtureSchema>;
