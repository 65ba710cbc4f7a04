// The installed-package checks (test/installed/): they pack and install the package, or run the
// action that does, so they are not part of `npm test`; .ci/run runs them with `npm run test:installed`.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/installed/*.check.ts"],
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
