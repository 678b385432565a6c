import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // In-process tests run the sources: a plugin importing the public entries must get the sources' modules (the same
  // GatewayError class), not the bundle in dist/ that package.json "exports" names.
  resolve: {
    alias: {
      "model-gateway/plugin": fileURLToPath(new URL("./core/public/plugin.ts", import.meta.url)),
      "model-gateway/testing": fileURLToPath(new URL("./core/public/testing.ts", import.meta.url)),
    },
  },
  test: {
    include: ["**/*.test.ts"],
    // test/agents/node_modules holds the coding agents (npm run test:agents), whose packages ship tests of their own;
    // templates/plugin/test runs in a scaffolded package (test/plugin-install.e2e.test.ts).
    exclude: ["**/node_modules/**", "templates/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // One file more than there are cores: most files mostly wait (timers, child processes, sockets), and vitest's
    // default (one fewer than the cores) ran them one at a time on two cores.
    maxWorkers: availableParallelism() + 1,
    // Files share worker processes: a new process per file (start-up, every module fetched and compiled again) took
    // more CPU than most files' tests. test/setup/file-fresh-state.ts gives each file what a new process gave it.
    isolate: false,
    // Fresh module state, timers, env and process listeners per file; its own TMPDIR for each file, removed when the
    // file ends.
    setupFiles: ["test/setup/file-fresh-state.ts", "test/setup/file-tmpdir.ts"],
    // The JSON report lets .ci/run print one plain "N passed, N failed" line.
    reporters: ["default", ["json", { outputFile: ".vitest/results.json" }]],
  },
});
