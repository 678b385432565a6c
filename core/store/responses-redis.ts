// Stored responses on Redis (store kind `redis`), shared by every replica: one key per response and one per
// output item (for item_reference), all under the store's prefix and with a PX expiry equal to the retention, so
// Redis drops them itself. A record names its project; another project's id reads as absent, and is never written
// over: the owner check and the write are one script (redis-scripts.ts RESPONSE_PUT), as replicas share the keys.
import type { Redis } from "ioredis";
import { RESPONSE_PUT } from "./redis-scripts.ts";
import { outputItemsOf, type ResponseRecord, type ResponseStore, type StoredItem } from "./responses-types.ts";

type Put = (...args: (string | number)[]) => Promise<number>;

export class RedisResponseStore implements ResponseStore {
  private readonly r: Redis & { mgResponsePut: Put };

  constructor(redis: Redis, private readonly prefix: string) {
    redis.defineCommand("mgResponsePut", { lua: RESPONSE_PUT });
    this.r = redis as Redis & { mgResponsePut: Put };
  }

  private recordKey(id: string): string {
    return `${this.prefix}resp:${id}`;
  }
  private itemKey(project: string, itemId: string): string {
    return `${this.prefix}respitem:${project}:${itemId}`;
  }

  async put(rec: ResponseRecord): Promise<boolean> {
    const ttl = rec.expiresAt - Date.now();
    if (ttl <= 0) return true; // past its retention already: unreadable as in the other stores, nothing to write
    const items = outputItemsOf(rec);
    const keys = [this.recordKey(rec.id), ...items.map((i) => this.itemKey(rec.project, i.id as string))];
    // How the record opens when it is the caller's project's (ownsId), and when it is any project's (recordJson).
    const ours = `${JSON.stringify({ id: rec.id, project: rec.project }).slice(0, -1)},`;
    const anyones = `${JSON.stringify({ id: rec.id }).slice(0, -1)},"project":`;
    const jsons = items.map((item) => JSON.stringify({ responseId: rec.id, item }));
    return (await this.r.mgResponsePut(keys.length, ...keys, ours, anyones, rec.project, ttl, recordJson(rec), ...jsons)) === 1;
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

/**
 * The record as Redis keeps it: one JSON object, its input the saving request's inputJson when it made one. Its id and
 * project come first (RESPONSE_PUT reads the owner there, never decoding the conversation).
 */
function recordJson(rec: ResponseRecord): string {
  const { input, inputJson, id, project, ...rest } = rec;
  const head = JSON.stringify({ id, project, ...rest });
  return `${head.slice(0, -1)},"input":${inputJson ?? JSON.stringify(input)}}`;
}
