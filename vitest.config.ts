import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Vitest's default on 2 cores is one worker, which runs every file in turn; many files wait on
    // servers, children and time budgets, so two keep both cores busy (431 s against 714 s here).
    maxWorkers: 2,
  },
});
