// `npm start` and `npx model-gateway` run the gateway as npm → sh -c "…" → node. npm forwards SIGTERM and SIGINT
// to its child, the shell, which dies of it without passing it on: the gateway was left running, an orphan holding
// its port. `npm start` execs node in place of the shell (package.json), so the signal reaches the gateway itself;
// `npx` runs its own shell line, so there the gateway notices that its parent is gone and stops as on SIGTERM.

/** How often the parent is looked at (one getppid() call). */
const POLL_MS = 500;

/**
 * Under a package manager (npm, npx, pnpm and yarn set npm_lifecycle_event), send this process SIGTERM once the
 * process that started it has exited, so its own graceful shutdown runs. Returns a function that stops the watch.
 * Not for a gateway started any other way: `nohup model-gateway start &` is meant to outlive its shell.
 */
export function stopWhenLauncherExits(env: NodeJS.ProcessEnv = process.env, onOrphaned?: (parent: number) => void): () => void {
  if (!env.npm_lifecycle_event) return () => {};
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onOrphaned?.(parent);
    process.kill(process.pid, "SIGTERM");
  }, POLL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
