// The installed-package check (test/installed/): packs and installs the package, so it is not part of
// `npm test`; .ci/run runs it with `npm run test:installed`.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/installed/*.check.ts"],
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
