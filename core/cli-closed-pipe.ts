// A reader that leaves early (`model-gateway keys list --json | head -3`, `model-gateway --help | true`) closes the
// pipe a command writes to. Node reports the failed write (EPIPE) as an unhandled 'error' event: a stack trace on
// stderr and exit 1. A command ends instead as a Unix tool that SIGPIPE ends: quietly, with the status a shell shows
// for one (128 + 13). `start` is a server, not a filter: it keeps serving (its logger already ignores a closed stderr).
// Any other failure to write (`usage > report.txt` on a full disk: ENOSPC) is no reader leaving: the command failed,
// and says so in one line on stderr, exit 1, rather than as a stack trace.

/** The exit status of a command whose stdout or stderr was a pipe its reader closed. */
export const CLOSED_PIPE_EXIT = 141;

/**
 * From now on, a write to a closed stdout or stderr ends the process with CLOSED_PIPE_EXIT, or, `keepRunning`, is
 * dropped; any other failed write ends it with exit 1, said on stderr as `<command>: printing its output failed: ...`.
 */
export function onClosedPipe(keepRunning: boolean, command = "model-gateway"): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EPIPE") {
        if (!keepRunning) process.exit(CLOSED_PIPE_EXIT);
        return;
      }
      // stderr itself failing has nowhere to say so: the exit status alone tells.
      if (stream !== process.stderr) process.stderr.write(`${command}: printing its output failed: ${failure(err)}\n`);
      process.exit(1);
    });
  }
}

/** "ENOSPC: no space left on device", without the ", write" of the call that failed. */
function failure(err: NodeJS.ErrnoException): string {
  return err.syscall ? err.message.replace(new RegExp(`, ${err.syscall}$`), "") : err.message;
}
