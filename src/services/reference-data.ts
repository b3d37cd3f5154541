import { ReferenceData } from "../domain/reference-data.js";
import type { ReferenceStore } from "../store/reference-store.js";

/**
 * Coins, exchanges and markets served from memory. At most every `checkEveryMs` a caller
 * asks the database for the reference data version (one tiny query), and reloads when another
 * process (or this one) changed it; so all server processes sharing one PostgreSQL agree
 * within that interval.
 */
export class ReferenceDataCache {
  private loaded: { version: number; data: ReferenceData } | undefined;
  private checkedAt = 0;
  private pending: Promise<ReferenceData> | undefined;

  constructor(
    private readonly store: ReferenceStore,
    private readonly checkEveryMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async current(): Promise<ReferenceData> {
    if (this.loaded !== undefined && this.now() - this.checkedAt < this.checkEveryMs) {
      return this.loaded.data;
    }
    this.pending ??= this.refresh().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** Forces the next `current()` to check the version (after this process changed data). */
  invalidate(): void {
    this.checkedAt = 0;
  }

  private async refresh(): Promise<ReferenceData> {
    const version = await this.store.version();
    if (this.loaded === undefined || this.loaded.version !== version) {
      const { version: loadedVersion, snapshot } = await this.store.snapshot();
      this.loaded = { version: loadedVersion, data: new ReferenceData(snapshot, loadedVersion) };
    }
    this.checkedAt = this.now();
    return this.loaded.data;
  }
}
