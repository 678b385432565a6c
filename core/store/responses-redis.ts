// Stored responses on Redis (store kind `redis`), shared by every replica: one key per response and one per
// output item (for item_reference), all under the store's prefix and with a PX expiry equal to the retention, so
// Redis drops them itself. A record names its project, and `sandbox: true` when a sandbox key made it (absent: a live
// key's, as every record of the previous release reads); another project's or kind's id reads as absent, and is never
// written over: the owner check and the write are one script (redis-scripts.ts RESPONSE_PUT), as replicas share the
// keys. A sandbox key's items have keys of their own (respitem-sandbox:), a live key's stay where the previous
// release reads and writes them (respitem:).
import type { Redis } from "ioredis";
import { RESPONSE_PUT } from "./redis-scripts.ts";
import { outputItemsOf, ownedBy, ownerOf, type ResponseOwner, type ResponseRecord, type ResponseStore, type StoredItem } from "./responses-types.ts";

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
  /** Item ids are the upstream's (any text): the kind goes before the project, never after it. */
  private itemKey(owner: ResponseOwner, itemId: string): string {
    return `${this.prefix}${owner.sandbox ? "respitem-sandbox" : "respitem"}:${owner.project}:${itemId}`;
  }

  async put(rec: ResponseRecord): Promise<boolean> {
    const ttl = rec.expiresAt - Date.now();
    if (ttl <= 0) return true; // past its retention already: unreadable as in the other stores, nothing to write
    const owner = ownerOf(rec);
    const items = outputItemsOf(rec);
    const keys = [this.recordKey(rec.id), ...items.map((i) => this.itemKey(owner, i.id as string))];
    // How the record opens when it is the caller's (ownsId), and when it is any project's (recordJson).
    const ours = `${JSON.stringify(recordHead(rec)).slice(0, -1)},`;
    const anyones = `${JSON.stringify({ id: rec.id }).slice(0, -1)},"project":`;
    const jsons = items.map((item) => JSON.stringify({ responseId: rec.id, item }));
    const sandbox = owner.sandbox ? 1 : 0;
    return (await this.r.mgResponsePut(keys.length, ...keys, ours, anyones, rec.project, ttl, recordJson(rec), sandbox, ...jsons)) === 1;
  }

  async get(owner: ResponseOwner, id: string, now: number): Promise<ResponseRecord | undefined> {
    const json = await this.r.get(this.recordKey(id));
    if (!json) return undefined;
    const rec = JSON.parse(json) as ResponseRecord;
    return ownedBy(rec, owner) && rec.expiresAt > now ? rec : undefined;
  }

  async delete(owner: ResponseOwner, id: string, now: number): Promise<boolean> {
    const rec = await this.get(owner, id, now);
    if (!rec) return false;
    await this.r.del(this.recordKey(id), ...outputItemsOf(rec).map((i) => this.itemKey(owner, i.id as string)));
    return true;
  }

  async items(owner: ResponseOwner, ids: string[], now: number): Promise<Map<string, StoredItem>> {
    const found = new Map<string, StoredItem>();
    if (!ids.length) return found;
    const values = await this.r.mget(...ids.map((i) => this.itemKey(owner, i)));
    values.forEach((v, i) => {
      if (v) found.set(ids[i]!, JSON.parse(v) as StoredItem);
    });
    if (!found.size) return found;
    // An item outlives its record when a replica of the release before sandbox records deleted a sandbox key's
    // response (it removes respitem: keys only): an item counts only while its record is still the caller's.
    const owned = await this.stillOwned(owner, [...new Set([...found.values()].map((s) => s.responseId))], now);
    for (const [itemId, stored] of found) if (!owned.has(stored.responseId)) found.delete(itemId);
    return found;
  }

  /**
   * Which of these record ids are the owner's: read by their head (a range, never the conversation), which releases
   * since the one-script owner check (RESPONSE_PUT) write first; a record that opens otherwise (older) is read whole.
   */
  private async stillOwned(owner: ResponseOwner, responseIds: string[], now: number): Promise<Set<string>> {
    const heads = responseIds.map((id) => JSON.stringify(recordHead({ id, project: owner.project, sandbox: owner.sandbox })).slice(0, -1));
    const pipe = this.r.pipeline();
    // 16 bytes past the head: a live key's record goes on with anything but `,"sandbox":true,`.
    responseIds.forEach((id, i) => pipe.getrange(this.recordKey(id), 0, Buffer.byteLength(heads[i]!) + 15));
    const read = (await pipe.exec()) ?? [];
    const owned = new Set<string>();
    for (const [i, id] of responseIds.entries()) {
      const [err, got] = read[i] ?? [];
      if (err) throw err;
      const text = String(got ?? "");
      if (!text) continue; // deleted or expired
      if (text.startsWith(`${heads[i]},`)) {
        if (owner.sandbox || !text.startsWith(`${heads[i]},"sandbox":true,`)) owned.add(id);
      } else if (!text.startsWith(`${JSON.stringify({ id }).slice(0, -1)},"project":`) && (await this.get(owner, id, now))) {
        owned.add(id);
      }
    }
    return owned;
  }
}

/** What a record opens with: its id, its project, and `sandbox: true` when a sandbox key made it. */
function recordHead(rec: Pick<ResponseRecord, "id" | "project" | "sandbox">): Pick<ResponseRecord, "id" | "project" | "sandbox"> {
  return rec.sandbox ? { id: rec.id, project: rec.project, sandbox: true } : { id: rec.id, project: rec.project };
}

/**
 * The record as Redis keeps it: one JSON object, its input the saving request's inputJson when it made one. Its head
 * (recordHead) comes first (RESPONSE_PUT reads the owner there, never decoding the conversation).
 */
function recordJson(rec: ResponseRecord): string {
  const { input, inputJson, id: _id, project: _project, sandbox: _sandbox, ...rest } = rec;
  const head = JSON.stringify({ ...recordHead(rec), ...rest });
  return `${head.slice(0, -1)},"input":${inputJson ?? JSON.stringify(input)}}`;
}
