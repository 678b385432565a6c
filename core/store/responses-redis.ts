// Stored responses on Redis (store kind `redis`), shared by every replica: one key per response and one per
// output item (for item_reference), all under the store's prefix and with a PX expiry equal to the retention, so
// Redis drops them itself. A record names its project; another project's id reads as absent.
import type { Redis } from "ioredis";
import { outputItemsOf, ownsId, type ResponseRecord, type ResponseStore, type StoredItem } from "./responses-types.ts";

export class RedisResponseStore implements ResponseStore {
  constructor(private readonly r: Redis, private readonly prefix: string) {}

  private recordKey(id: string): string {
    return `${this.prefix}resp:${id}`;
  }
  private itemKey(project: string, itemId: string): string {
    return `${this.prefix}respitem:${project}:${itemId}`;
  }

  async put(rec: ResponseRecord): Promise<boolean> {
    const ttl = rec.expiresAt - Date.now();
    if (ttl <= 0) return true; // past its retention already: unreadable as in the other stores, nothing to write
    const current = await this.r.get(this.recordKey(rec.id));
    if (!ownsId(current ? (JSON.parse(current) as ResponseRecord) : undefined, rec)) return false;
    const m = this.r.multi().set(this.recordKey(rec.id), recordJson(rec), "PX", ttl);
    for (const item of outputItemsOf(rec)) {
      m.set(this.itemKey(rec.project, item.id as string), JSON.stringify({ responseId: rec.id, item }), "PX", ttl);
    }
    const out = await m.exec();
    const failed = out?.find(([err]) => err);
    if (failed) throw failed[0];
    return true;
  }

  async get(project: string, id: string, now: number): Promise<ResponseRecord | undefined> {
    const json = await this.r.get(this.recordKey(id));
    if (!json) return undefined;
    const rec = JSON.parse(json) as ResponseRecord;
    return rec.project === project && rec.expiresAt > now ? rec : undefined;
  }

  async delete(project: string, id: string, now: number): Promise<boolean> {
    const rec = await this.get(project, id, now);
    if (!rec) return false;
    await this.r.del(this.recordKey(id), ...outputItemsOf(rec).map((i) => this.itemKey(project, i.id as string)));
    return true;
  }

  async items(project: string, ids: string[], _now: number): Promise<Map<string, StoredItem>> {
    const found = new Map<string, StoredItem>();
    if (!ids.length) return found;
    const values = await this.r.mget(...ids.map((i) => this.itemKey(project, i)));
    values.forEach((v, i) => {
      if (v) found.set(ids[i]!, JSON.parse(v) as StoredItem);
    });
    return found;
  }
}

/** The record as Redis keeps it: one JSON object, its input the saving request's inputJson when it made one. */
function recordJson(rec: ResponseRecord): string {
  const { input, inputJson, ...rest } = rec;
  const head = JSON.stringify(rest);
  return `${head.slice(0, -1)},"input":${inputJson ?? JSON.stringify(input)}}`;
}
