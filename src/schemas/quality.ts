import { z } from "zod";
import { INSTRUMENT_TYPES } from "../domain/report.js";
import { dateSchema } from "./report.js";
import { MAX_ID_LENGTH, MAX_SYMBOL_LENGTH, storableText } from "./text.js";

const usd = z.number().nonnegative().nullish();

/**
 * A fixture's public depth snapshot (`depthSnapshots`): the figures CoinGecko's exchange
 * tickers give with depth=true, for a market of the reference data, on `date`. `takenAt`
 * (on that UTC day) orders the snapshots of one day; default: the start of the day.
 */
export const depthSnapshotSchema = z
  .strictObject({
    exchangeId: storableText(MAX_ID_LENGTH),
    baseCoinId: storableText(MAX_ID_LENGTH),
    quoteSymbol: storableText(MAX_SYMBOL_LENGTH),
    instrumentType: z.enum(INSTRUMENT_TYPES).default("spot"),
    date: dateSchema,
    takenAt: z.iso.datetime({ offset: true }).optional(),
    costToMoveUpUsd: usd,
    costToMoveDownUsd: usd,
    bidAskSpreadPercentage: z.number().min(0).max(100).nullish(),
    volumeUsd: usd,
  })
  .refine((s) => s.takenAt === undefined || new Date(s.takenAt).toISOString().startsWith(s.date), {
    message: "takenAt must fall on date (UTC)",
    path: ["takenAt"],
  });

export type FixtureDepthSnapshot = z.infer<typeof depthSnapshotSchema>;
