// Log files still being opened, for a process about to exit: pino's own exit hook flushes each file destination and
// throws "sonic boom is not ready yet" (an uncaught trace after the process's last message) if one is not open yet.
// No imports: the CLI's entry awaits this before exiting without loading the logger.

interface Opens {
  once(event: "ready" | "error", listener: () => void): unknown;
}

const stillOpening = new Set<Promise<void>>();

/** Counts `file` (a destination that emits "ready" once its file is open, or "error") until it has opened. */
export function opening(file: Opens): void {
  const opened: Promise<void> = new Promise<void>((resolve) => {
    file.once("ready", resolve);
    file.once("error", resolve);
  }).then(() => void stillOpening.delete(opened));
  stillOpening.add(opened);
}

/** How many log files are still opening. */
export function logFilesStillOpening(): number {
  return stillOpening.size;
}

/** Resolves once every log file has opened (or failed to), or after `ms`. */
export async function logFilesOpened(ms = 2_000): Promise<void> {
  if (!stillOpening.size) return;
  let bound: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(stillOpening), new Promise<void>((r) => (bound = setTimeout(r, ms).unref()))]);
  clearTimeout(bound);
}
