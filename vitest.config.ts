import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["**/*.test.ts"],
    // test/agents/node_modules holds the coding agents (npm run test:agents), whose packages ship tests of their own.
    exclude: ["**/node_modules/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The JSON report lets .ci/run print one plain "N passed, N failed" line.
    reporters: ["default", ["json", { outputFile: ".vitest/results.json" }]],
  },
});
