// The installed-package checks (test/installed/): they pack and install the package, or run the
// action that does, so they are not part of `npm test`; .ci/run runs them with `npm run test:installed`.
// The pack and the install are done once, before the checks (test/installed/install-once.ts); the
// action check builds its own from a copy of the checkout, as the action does. One file at a time
// (vitest's default on 2 cores): the toctou races count escapes in a few seconds, and on a loaded
// machine their control found none ("race ineffective").
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/installed/*.check.ts"],
    globalSetup: ["test/installed/install-once.ts"],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    maxWorkers: 1,
  },
});
