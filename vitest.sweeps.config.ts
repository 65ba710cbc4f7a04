// The sweeps (test/sweeps/): a planted bug held to the audit's default budget at every seed from 1 to
// 20, in process and over MCP, and correct targets audited beside busy loops (busy-machine.sweep.ts).
// Too slow for `npm test`, which keeps seed 1 of each; .ci/run runs them with `npm run test:sweeps`.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/sweeps/*.sweep.ts"],
    setupFiles: ["test/setup.ts"],
    testTimeout: 600_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
  },
});
