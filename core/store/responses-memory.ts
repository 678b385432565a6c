// Stored responses in this process (store kind `memory`): gone on exit. Expired records are dropped when read and
// swept at most once a minute on write; the oldest go first past MAX_RECORDS so a long run cannot grow unbounded.
// A record's input (the whole conversation, maybe ~100 000 items) is kept as JSON text and parsed on each read, as
// the SQLite store does: a structuredClone of 99 000 items on each write and read held every request 0.6-1.2 s.
import { outputItemsOf, ownedBy, ownerOf, ownsId, type ResponseOwner, type ResponseRecord, type ResponseStore, type StoredItem } from "./responses-types.ts";

const MAX_RECORDS = 50_000;
const SWEEP_EVERY_MS = 60_000;

/** A record as kept here: `input` is empty, the conversation is `inputJson`. */
interface Kept { rec: ResponseRecord; inputJson: string }

export class MemoryResponseStore implements ResponseStore {
  private readonly records = new Map<string, Kept>();
  /** project\nkind\nitemId -> the record holding it (itemKey). */
  private readonly itemIndex = new Map<string, string>();
  private lastSweep = 0;

  async put(rec: ResponseRecord): Promise<boolean> {
    if (rec.createdAt - this.lastSweep >= SWEEP_EVERY_MS) this.sweep((this.lastSweep = rec.createdAt));
    if (!ownsId(this.records.get(rec.id)?.rec, rec)) return false;
    const { input, inputJson, ...rest } = rec;
    const kept: Kept = { rec: { ...structuredClone(rest), input: [] }, inputJson: inputJson ?? JSON.stringify(input) };
    this.drop(rec.id);
    this.records.set(rec.id, kept);
    for (const item of outputItemsOf(rec)) this.itemIndex.set(itemKey(ownerOf(rec), item.id as string), rec.id);
    while (this.records.size > MAX_RECORDS) this.drop(this.records.keys().next().value!);
    return true;
  }

  private live(owner: ResponseOwner, id: string, now: number): Kept | undefined {
    const k = this.records.get(id);
    if (!k) return undefined;
    if (k.rec.expiresAt <= now) {
      this.drop(id);
      return undefined;
    }
    return ownedBy(k.rec, owner) ? k : undefined;
  }

  async get(owner: ResponseOwner, id: string, now: number): Promise<ResponseRecord | undefined> {
    const k = this.live(owner, id, now);
    return k && { ...structuredClone(k.rec), input: JSON.parse(k.inputJson) };
  }

  async delete(owner: ResponseOwner, id: string, now: number): Promise<boolean> {
    if (!this.live(owner, id, now)) return false;
    this.drop(id);
    return true;
  }

  async items(owner: ResponseOwner, ids: string[], now: number): Promise<Map<string, StoredItem>> {
    const found = new Map<string, StoredItem>();
    for (const itemId of ids) {
      const rid = this.itemIndex.get(itemKey(owner, itemId));
      const r = rid === undefined ? undefined : this.live(owner, rid, now)?.rec;
      const item = r && outputItemsOf(r).find((i) => i.id === itemId);
      if (item) found.set(itemId, { responseId: r!.id, item: structuredClone(item) });
    }
    return found;
  }

  private drop(id: string): void {
    const r = this.records.get(id)?.rec;
    if (!r) return;
    this.records.delete(id);
    for (const item of outputItemsOf(r)) {
      const k = itemKey(ownerOf(r), item.id as string);
      if (this.itemIndex.get(k) === id) this.itemIndex.delete(k);
    }
  }

  private sweep(now: number): void {
    for (const [id, k] of this.records) if (k.rec.expiresAt <= now) this.drop(id);
  }
}

/** An item's index key: project ids hold no newline, and the item id comes last. */
function itemKey(owner: ResponseOwner, itemId: string): string {
  return `${owner.project}\n${owner.sandbox ? "sandbox" : "live"}\n${itemId}`;
}
