// API keys in this process (store kind memory): gone on exit, like everything else in that store.
import { patched, rotationRefused, type ApiKeyStore, type KeyPatch, type RotateResult, type StoredKey } from "./api-keys-types.ts";

export class MemoryApiKeyStore implements ApiKeyStore {
  private readonly keys = new Map<string, StoredKey>();
  private readonly used = new Map<string, number>();
  private changes = 0;

  async list(): Promise<StoredKey[]> {
    return [...this.keys.values()].map((k) => structuredClone(k));
  }

  async get(sha256: string): Promise<StoredKey | undefined> {
    const k = this.keys.get(sha256);
    return k && structuredClone(k);
  }

  async create(key: StoredKey): Promise<boolean> {
    return this.add(key);
  }

  /** Synchronous, so a rotation checks, adds and updates with no other call in between. */
  private add(key: StoredKey): boolean {
    if (this.keys.has(key.sha256)) return false;
    for (const k of this.keys.values()) if (k.project === key.project && k.id === key.id) return false;
    this.keys.set(key.sha256, structuredClone(key));
    this.changes++;
    return true;
  }

  async rotate(sha256: string, fresh: StoredKey, patch: KeyPatch): Promise<RotateResult> {
    const old = this.keys.get(sha256);
    const refused = rotationRefused(old);
    if (refused) return refused;
    if (!this.add(fresh)) return { ok: false, reason: "taken" };
    const previous = patched(old!, patch);
    this.keys.set(sha256, previous);
    return { ok: true, previous: structuredClone(previous) };
  }

  async update(sha256: string, patch: KeyPatch): Promise<StoredKey | undefined> {
    const k = this.keys.get(sha256);
    if (!k) return undefined;
    const next = patched(k, patch);
    this.keys.set(sha256, next);
    this.changes++;
    return structuredClone(next);
  }

  async version(): Promise<string> {
    return String(this.changes);
  }

  async touch(used: Map<string, number>): Promise<void> {
    for (const [h, at] of used) if (at > (this.used.get(h) ?? 0)) this.used.set(h, at);
  }

  async lastUsed(): Promise<Map<string, number>> {
    return new Map(this.used);
  }
}
