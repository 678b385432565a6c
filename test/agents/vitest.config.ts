// `npm run test:agents` only: the real coding agents, one after another (each is a heavy process on 2 cores).
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: resolve(dirname(fileURLToPath(import.meta.url)), "../.."),
    include: ["test/agents/*.run.ts"],
    pool: "forks",
    fileParallelism: false,
    hookTimeout: 60_000,
  },
});
