import { quoteKeyOf } from "../../domain/report.js";
import { RecordFileError, type RecordSource } from "./read-records.js";
import type { SubmissionVersion } from "./submission-types.js";

/** Duplicates named one by one; past these, counted. */
const MAX_LISTED = 100;

/** Record `index` has the record key of the earlier record `first` (zero-based, whole file). */
export type DuplicateKey = { index: number; first: number };

/**
 * Records of the file that repeat an earlier record's key, as the service keys a record:
 * date, exchangeId, baseCoinId, the quote (quoteCoinId, else the symbol upper-cased) and the
 * instrument type (v2's field; a v1 record's follows from its exchange). The service refuses
 * two records of one key in a batch; across batches the later would silently overwrite the
 * earlier, so the whole file is checked before anything is sent. Fields are compared as the
 * file has them: two exchange ids that the service routes to one exchange are not caught here.
 * A record missing a key field is left to the service, which names what is missing.
 */
export function duplicateKeys(
  records: readonly unknown[],
  version: SubmissionVersion,
): DuplicateKey[] {
  const firstOfKey = new Map<string, number>();
  const duplicates: DuplicateKey[] = [];
  records.forEach((record, index) => {
    const key = recordKey(record, version);
    if (key === undefined) return;
    const first = firstOfKey.get(key);
    if (first === undefined) firstOfKey.set(key, index);
    else duplicates.push({ index, first });
  });
  return duplicates;
}

function recordKey(record: unknown, version: SubmissionVersion): string | undefined {
  if (typeof record !== "object" || record === null) return undefined;
  const field = (name: string) => Reflect.get(record, name);
  const [date, exchangeId, baseCoinId] = [field("date"), field("exchangeId"), field("baseCoinId")];
  const [quoteCoinId, quoteCoinSymbol] = [field("quoteCoinId"), field("quoteCoinSymbol")];
  const instrumentType = version === "v2" ? field("instrumentType") : "";
  const quoteOk =
    typeof quoteCoinId === "string" || (quoteCoinId == null && typeof quoteCoinSymbol === "string");
  const strings = [date, exchangeId, baseCoinId, instrumentType].every(
    (v) => typeof v === "string",
  );
  if (!quoteOk || !strings) return undefined;
  const quote = quoteKeyOf(
    typeof quoteCoinId === "string" ? quoteCoinId : null,
    typeof quoteCoinSymbol === "string" ? quoteCoinSymbol : null,
  );
  return JSON.stringify([date, exchangeId, baseCoinId, quote, instrumentType]);
}

/** Nothing is sent from a file holding one record key twice: the later would overwrite. */
export function refuseDuplicateKeys(
  file: string,
  source: RecordSource,
  version: SubmissionVersion,
) {
  const duplicates = duplicateKeys(source.records, version);
  if (duplicates.length === 0) return;
  const count = duplicates.length === 1 ? "1 record has" : `${duplicates.length} records have`;
  const lines = duplicates
    .slice(0, MAX_LISTED)
    .map(
      ({ index, first }) =>
        `${source.locate(index)}: Duplicate record key (same as ${source.locate(first)})`,
    );
  const unlisted = duplicates.length - lines.length;
  if (unlisted > 0) lines.push(`… and ${unlisted} more`);
  throw new RecordFileError(
    `${file}: ${count} the record key of an earlier one (date, exchangeId, baseCoinId, quote, instrumentType); nothing was sent\n${lines.join("\n")}`,
  );
}
