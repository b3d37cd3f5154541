import { z } from "zod";
import { MIN_FIXTURE_KEY_LENGTH } from "../domain/api-key.js";
import { INSTRUMENT_TYPES, SUBMISSION_TYPES } from "../domain/report.js";
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

export const engagementSchema = z
  .strictObject({
    baseCoinId: id,
    type: z.enum(SUBMISSION_TYPES),
    since: dateSchema,
    until: dateSchema.nullish(),
  })
  .refine((e) => e.until == null || e.until >= e.since, {
    message: "until must not be before since",
    path: ["until"],
  });

export const organizationSchema = z.strictObject({
  id,
  name: storableText(MAX_NAME_LENGTH),
  apiKeys: z.array(apiKeySchema).default([]),
  engagements: z.array(engagementSchema).default([]),
});

/** A new organization made by an operator: its id is also typed on command lines. */
export const newOrganizationSchema = z.object({
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "lower-case letters, digits, - and _, at most 63"),
  name: z.string().min(1).max(200),
});

/** The fixture file of CONTRACT section 3: reference data, organizations, keys, engagements. */
export const fixtureSchema = z.strictObject({
  coins: z.array(coinSchema).default([]),
  exchanges: z.array(exchangeSchema).default([]),
  markets: z.array(marketSchema).default([]),
  organizations: z.array(organizationSchema).default([]),
});

export type Fixture = z.infer<typeof fixtureSchema>;
