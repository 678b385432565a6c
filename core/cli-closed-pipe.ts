// A reader that leaves early (`model-gateway keys list --json | head -3`, `model-gateway --help | true`) closes the
// pipe a command writes to. Node reports the failed write (EPIPE) as an unhandled 'error' event: a stack trace on
// stderr and exit 1. A command ends instead as a Unix tool that SIGPIPE ends: quietly, with the status a shell shows
// for one (128 + 13). `start` is a server, not a filter: it keeps serving (its logger already ignores a closed stderr).

/** The exit status of a command whose stdout or stderr was a pipe its reader closed. */
export const CLOSED_PIPE_EXIT = 141;

/** From now on, a write to a closed stdout or stderr ends the process with CLOSED_PIPE_EXIT, or, `keepRunning`, is dropped. */
export function onClosedPipe(keepRunning: boolean): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE") throw err; // as before: any other failure of the terminal or file is no reader leaving
      if (!keepRunning) process.exit(CLOSED_PIPE_EXIT);
    });
  }
}
