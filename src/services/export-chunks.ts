/** How many reports an export reads at a time: memory stays flat whatever the export's size. */
export const EXPORT_CHUNK = 500;

/** Every chunk a keyset listing yields from the start, until it names no next cursor. */
export async function* exportChunks<Item, Cursor>(
  after: (
    limit: number,
    cursor: Cursor | undefined,
  ) => Promise<{ items: Item[]; next: Cursor | undefined }>,
): AsyncGenerator<Item[]> {
  let cursor: Cursor | undefined;
  do {
    const { items, next } = await after(EXPORT_CHUNK, cursor);
    if (items.length > 0) yield items;
    cursor = next;
  } while (cursor !== undefined);
}
