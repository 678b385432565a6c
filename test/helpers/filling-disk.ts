// A disk that fills up, for the spool's segment files (its openSegment seam): a write takes what fits and says how
// much (a short write, no error, as a full filesystem does), the next one fails with ENOSPC; a truncate gives the room
// back. It can also take writes in pieces, fail fsyncs (EIO) and refuse truncates.
import { open } from "node:fs/promises";
import type { SegmentFile } from "../../core/store/spool.ts";

export interface FillingDisk {
  /** Bytes left (shared by every file opened on it). */
  room: number;
  /** This many fsyncs from now fail with EIO. */
  failSyncs: number;
  failTruncate: boolean;
  open(path: string): Promise<SegmentFile>;
}

/** `room` bytes left; `piece` caps what one write takes (a short write with room left, as an interrupted one is). */
export function fillingDisk(room: number, o: { piece?: number } = {}): FillingDisk {
  const d: FillingDisk = {
    room,
    failSyncs: 0,
    failTruncate: false,
    async open(path) {
      const fh = await open(path, "a");
      let size = 0;
      return {
        async write(buf, offset, length) {
          if (d.room <= 0) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
          const { bytesWritten } = await fh.write(buf, offset, Math.min(length, d.room, o.piece ?? Infinity));
          d.room -= bytesWritten;
          size += bytesWritten;
          return { bytesWritten };
        },
        async datasync() {
          if (d.failSyncs > 0 && d.failSyncs--) throw Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" });
          await fh.datasync();
        },
        async truncate(length) {
          if (d.failTruncate) throw Object.assign(new Error("EIO: i/o error, ftruncate"), { code: "EIO" });
          await fh.truncate(length);
          d.room += size - length;
          size = length;
        },
        close: () => fh.close(),
      };
    },
  };
  return d;
}
