// Test files share their worker processes (vitest.config.ts isolate: false): a new process per file cost more CPU than
// most files' tests (start-up, every module fetched from vitest's main process and compiled again). What that new
// process gave each file is given here instead, before the file and when it ends:
// - the project's modules evaluated anew (the gateway's module state starts as in a new process); the cached code and
//   node_modules are kept;
// - real timers, and process.env as it was (a file's own assignments, vi.stubEnv, TMPDIR from file-tmpdir.ts);
// - no process listeners left by the file (a gateway's signal handlers, a logger's exit hook, a CLI's
//   unhandledRejection handler that would swallow the next file's errors).
import { afterAll, vi } from "vitest";

vi.resetModules();
vi.useRealTimers();

const envBefore = { ...process.env };
const events = ["SIGINT", "SIGTERM", "SIGHUP", "exit", "beforeExit", "unhandledRejection", "uncaughtException", "warning"];
const listenersBefore = new Map(events.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));

afterAll(() => {
  vi.useRealTimers();
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
  for (const key of Object.keys(process.env)) if (!(key in envBefore)) delete process.env[key];
  Object.assign(process.env, envBefore);
  for (const [event, before] of listenersBefore) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.has(listener)) process.removeListener(event, listener);
    }
  }
});
