// Stored responses in this process (store kind `memory`): gone on exit. Expired records are dropped when read and
// swept at most once a minute on write; the oldest go first past MAX_RECORDS so a long run cannot grow unbounded.
// A record's input (the whole conversation, maybe ~100 000 items) is kept as JSON text and parsed on each read, as
// the SQLite store does: a structuredClone of 99 000 items on each write and read held every request 0.6-1.2 s.
import { outputItemsOf, ownsId, type ResponseRecord, type ResponseStore, type StoredItem } from "./responses-types.ts";

const MAX_RECORDS = 50_000;
const SWEEP_EVERY_MS = 60_000;

/** A record as kept here: `input` is empty, the conversation is `inputJson`. */
interface Kept { rec: ResponseRecord; inputJson: string }

export class MemoryResponseStore implements ResponseStore {
  private readonly records = new Map<string, Kept>();
  /** project\nitemId -> the record holding it. */
  private readonly itemIndex = new Map<string, string>();
  private lastSweep = 0;

  async put(rec: ResponseRecord): Promise<boolean> {
    if (rec.createdAt - this.lastSweep >= SWEEP_EVERY_MS) this.sweep((this.lastSweep = rec.createdAt));
    if (!ownsId(this.records.get(rec.id)?.rec, rec)) return false;
    const { input, inputJson, ...rest } = rec;
    const kept: Kept = { rec: { ...structuredClone(rest), input: [] }, inputJson: inputJson ?? JSON.stringify(input) };
    this.drop(rec.id);
    this.records.set(rec.id, kept);
    for (const item of outputItemsOf(rec)) this.itemIndex.set(`${rec.project}\n${item.id}`, rec.id);
    while (this.records.size > MAX_RECORDS) this.drop(this.records.keys().next().value!);
    return true;
  }

  private live(project: string, id: string, now: number): Kept | undefined {
    const k = this.records.get(id);
    if (!k) return undefined;
    if (k.rec.expiresAt <= now) {
      this.drop(id);
      return undefined;
    }
    return k.rec.project === project ? k : undefined;
  }

  async get(project: string, id: string, now: number): Promise<ResponseRecord | undefined> {
    const k = this.live(project, id, now);
    return k && { ...structuredClone(k.rec), input: JSON.parse(k.inputJson) };
  }

  async delete(project: string, id: string, now: number): Promise<boolean> {
    if (!this.live(project, id, now)) return false;
    this.drop(id);
    return true;
  }

  async items(project: string, ids: string[], now: number): Promise<Map<string, StoredItem>> {
    const found = new Map<string, StoredItem>();
    for (const itemId of ids) {
      const rid = this.itemIndex.get(`${project}\n${itemId}`);
      const r = rid === undefined ? undefined : this.live(project, rid, now)?.rec;
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
      const k = `${r.project}\n${item.id}`;
      if (this.itemIndex.get(k) === id) this.itemIndex.delete(k);
    }
  }

  private sweep(now: number): void {
    for (const [id, k] of this.records) if (k.rec.expiresAt <= now) this.drop(id);
  }
}
