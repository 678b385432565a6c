// The assets directory holds every tenant's generated images and videos: only this process's user may read it.
// Created 0700 (files in it are written 0600); one that already exists must be a real directory owned by this
// user — in a shared /tmp another user could have made it first, or planted a symlink — and loose modes on it are
// tightened. The default is per user, so two users' gateways on one machine never share it.
import { chmod, lstat, mkdir } from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";

/** `<tmpdir>/model-gateway-assets-<uid>` (the user name where there are no uids). */
export function defaultAssetsDir(): string {
  return join(tmpdir(), `model-gateway-assets-${process.getuid?.() ?? userInfo().username}`);
}

export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const st = await lstat(dir);
  if (st.isSymbolicLink() || !st.isDirectory()) {
    throw new Error(`assets directory ${dir} is not a directory but a ${st.isSymbolicLink() ? "symbolic link" : "file"}: refusing to keep assets there (set server.assets_dir)`);
  }
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) {
    throw new Error(`assets directory ${dir} belongs to uid ${st.uid}, not to this process's uid ${uid}: refusing to keep assets there (set server.assets_dir)`);
  }
  if ((st.mode & 0o077) !== 0) await chmod(dir, 0o700);
}
