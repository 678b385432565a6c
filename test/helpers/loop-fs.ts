// A real, small ext4 filesystem for the store tests: an image file mounted through a loop device (root only), that
// a test can fill up, turn read-only the way a failing disk does (ext4's own error path, errors=remount-ro), and
// repair (unmount, fsck, mount again). `skip` says why when this machine cannot (not root, no loop devices).
import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";

export interface LoopFs {
  /** Where it is mounted. */
  dir: string;
  /** Write one file until the filesystem has no room left. */
  fill(): void;
  /** Remove that file. */
  unfill(): void;
  /** Make ext4 report an error: with errors=remount-ro it goes read-only at once (writes fail with EROFS). */
  failReadOnly(): void;
  /** Unmount (nothing may have files open on it), fsck, and mount again read-write. */
  repair(): void;
  remove(): void;
}

const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { stdio: ["ignore", "pipe", "pipe"] }).toString();

/** A mounted filesystem of `sizeMb`, or the reason it cannot be had here. */
export function loopFs(sizeMb = 16): LoopFs | { skip: string } {
  if (process.getuid?.() !== 0) return { skip: "needs root to mount a loop device" };
  const base = mkdtempSync(join(tmpdir(), "mg-loopfs-"));
  const image = join(base, "fs.img");
  const dir = join(base, "mnt");
  const mount = () => run("mount", ["-o", "loop,errors=remount-ro", image, dir]);
  try {
    run("truncate", ["-s", `${sizeMb}M`, image]);
    run("mkfs.ext4", ["-q", "-F", image]);
    run("mkdir", ["-p", dir]);
    mount();
  } catch (err) {
    rmSync(base, { recursive: true, force: true });
    return { skip: `cannot mount a loop filesystem here (mkfs.ext4 and mount -o loop): ${String((err as Error).message).split("\n")[0]}` };
  }
  const filler = join(dir, "filler");
  return {
    dir,
    fill() {
      const fd = openSync(filler, "w");
      const chunk = Buffer.alloc(1 << 20);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
      } finally {
        closeSync(fd);
      }
      // The last partial chunk: whatever blocks are left.
      const fd2 = openSync(filler, "a");
      try {
        for (;;) writeSync(fd2, Buffer.alloc(4096));
      } catch {
        // full
      } finally {
        closeSync(fd2);
      }
    },
    unfill() {
      unlinkSync(filler);
    },
    failReadOnly() {
      const dev = basename(run("findmnt", ["-no", "SOURCE", dir]).trim());
      execFileSync("sh", ["-c", `echo mg-test > /sys/fs/ext4/${dev}/trigger_fs_error`]);
    },
    repair() {
      run("umount", [dir]);
      // The loop device is let go of lazily after umount: mounted again while it still holds the image, mount reuses it
      // and its cached blocks, the error-marked superblock among them, so ext4 came back read-only (files running
      // side by side make that likelier). Let go of it, and wait until it has, before fsck and mount read the image.
      detach(image);
      try {
        run("fsck.ext4", ["-fy", image]);
      } catch {
        // exit 1: errors corrected
      }
      mount();
    },
    remove() {
      try {
        run("umount", [dir]);
      } catch {
        // not mounted
      }
      rmSync(base, { recursive: true, force: true });
    },
  };
}

/** Detach every loop device backed by `image`, waiting (at most 10 s) until none is left. */
function detach(image: string): void {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const devices = run("losetup", ["-j", image]).split("\n").map((l) => l.split(":")[0]!.trim()).filter(Boolean);
    if (!devices.length) return;
    if (Date.now() > deadline) throw new Error(`loop devices ${devices.join(", ")} still hold ${image}`);
    for (const dev of devices) {
      try {
        run("losetup", ["-d", dev]);
      } catch {
        // already being let go of
      }
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  }
}
