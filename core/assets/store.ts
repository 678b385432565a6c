// Generated images and videos kept on disk until the last signed URL handed out for them expires.
// One file per asset plus a small JSON sidecar (type, size, retention); a sweeper deletes expired ones.
import { readFile, rm, writeFile, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { ensurePrivateDir } from "./private-dir.ts";

export interface AssetMeta {
  name: string;
  contentType: string;
  size: number;
  /** Unix ms after which the asset may be deleted. */
  keepUntil: number;
}

const EXT: Record<string, string> = {
  "image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif", "video/mp4": "mp4", "video/webm": "webm", "video/quicktime": "mov",
};

/** Owner read/write only (the directory is 0700 as well). */
const PRIVATE = 0o600;

export const NAME = /^(img|vid)_[A-Za-z0-9]{20,40}\.(png|jpg|webp|gif|mp4|webm|mov|bin)$/;

export class AssetStore {
  private timer?: NodeJS.Timeout;
  private ready?: Promise<unknown>;

  constructor(readonly dir: string, sweepEveryMs = 10 * 60_000) {
    this.timer = setInterval(() => void this.sweep().catch(() => {}), sweepEveryMs);
    this.timer.unref();
  }

  /** Checked once; a refusal is not remembered, so a directory put right is used without a restart. */
  private ensureDir(): Promise<unknown> {
    return (this.ready ??= ensurePrivateDir(this.dir).catch((err) => {
      this.ready = undefined;
      throw err;
    }));
  }

  async put(prefix: "img" | "vid", bytes: Uint8Array, contentType: string, keepUntil: number): Promise<AssetMeta> {
    await this.ensureDir();
    const name = `${prefix}_${randomBytes(16).toString("hex")}.${EXT[contentType] ?? "bin"}`;
    const meta: AssetMeta = { name, contentType, size: bytes.byteLength, keepUntil };
    await writeFile(join(this.dir, name), bytes, { mode: PRIVATE });
    await writeFile(join(this.dir, `${name}.json`), JSON.stringify(meta), { mode: PRIVATE });
    return meta;
  }

  async meta(name: string): Promise<AssetMeta | undefined> {
    if (!NAME.test(name)) return undefined;
    try {
      const meta = JSON.parse(await readFile(join(this.dir, `${name}.json`), "utf8")) as AssetMeta;
      return meta.keepUntil > Date.now() ? meta : undefined;
    } catch {
      return undefined;
    }
  }

  async read(name: string): Promise<Uint8Array | undefined> {
    if (!NAME.test(name)) return undefined;
    try {
      return await readFile(join(this.dir, name));
    } catch {
      return undefined;
    }
  }

  path(name: string): string {
    return join(this.dir, name);
  }

  /** A refreshed URL must not outlive its file: push the retention out. */
  async extend(name: string, keepUntil: number): Promise<boolean> {
    const meta = await this.meta(name);
    if (!meta) return false;
    if (keepUntil > meta.keepUntil) await writeFile(join(this.dir, `${name}.json`), JSON.stringify({ ...meta, keepUntil }));
    return true;
  }

  async sweep(now = Date.now()): Promise<number> {
    let removed = 0;
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return 0;
    }
    for (const f of names) {
      if (!f.endsWith(".json")) continue;
      const name = f.slice(0, -5);
      try {
        const meta = JSON.parse(await readFile(join(this.dir, f), "utf8")) as AssetMeta;
        if (meta.keepUntil > now) continue;
      } catch {
        // unreadable sidecar: only remove it once it is clearly stale
        const mtime = (await stat(join(this.dir, f)).catch(() => undefined))?.mtimeMs ?? 0;
        if (mtime > now - 86_400_000) continue;
      }
      await rm(join(this.dir, name), { force: true });
      await rm(join(this.dir, f), { force: true });
      removed++;
    }
    return removed;
  }

  close(): void {
    clearInterval(this.timer);
  }
}
