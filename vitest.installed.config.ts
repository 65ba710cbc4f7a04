// The installed-package checks (test/installed/): they pack and install the package, or run the
// action that does, so they are not part of `npm test`; .ci/run runs them with `npm run test:installed`.
// The pack and the install are done once, before the checks (test/installed/install-once.ts, the root's
// globalSetup: it runs once, and what it provides reaches both projects); the action check builds its
// own from a copy of the checkout, as the action does. Two projects, one after the other
// (`sequence.groupOrder`): the checks that judge by runs, two files at a time (each mostly one
// single-threaded child, so one file leaves a core of the two idle), then the toctou races alone
// (race.check.ts): they count escapes in a few seconds, and on a loaded machine their control found
// none ("race ineffective").
import { defineConfig } from "vitest/config";

const RACES = "test/installed/race.check.ts";
const timeouts = { testTimeout: 300_000, hookTimeout: 300_000 };

export default defineConfig({
  test: {
    globalSetup: ["test/installed/install-once.ts"],
    projects: [
      { test: { name: "installed", include: ["test/installed/*.check.ts"], exclude: [RACES], maxWorkers: 2, sequence: { groupOrder: 0 }, ...timeouts } },
      { test: { name: "installed races, alone", include: [RACES], maxWorkers: 1, sequence: { groupOrder: 1 }, ...timeouts } },
    ],
  },
});
