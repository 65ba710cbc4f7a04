import { existsSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The files that take longest, longest first (their times on a quiet 2-core machine, summed over their
 * tests: the lead's run at c07f0da, 44 s for the first down to 10 s, slow-target.test.ts since its
 * budgets shrank). Vitest orders files by the durations it cached at the last run, and a clean clone
 * has none: it took them alphabetically, so slow-target.test.ts, then longer than a third of the run,
 * started among the last and ran on while the other worker had nothing left. Started first, the long
 * files share the run with the many short ones that fill the gaps.
 */
export const SLOWEST_FIRST = [
  "test/kill-matrix.test.ts",
  "test/audit.test.ts",
  "test/lessons.test.ts",
  "test/slow-target.test.ts",
  "test/lesson-command.test.ts",
  "test/surface.test.ts",
  "test/mcp.test.ts",
  "test/shapes.test.ts",
  "test/audit-run.test.ts",
  "test/toctou-targets.test.ts",
  "test/mcp-endings.test.ts",
  "test/mcp-dying.test.ts",
  "test/audit-reports.test.ts",
  "test/audit-conformance.test.ts",
  "test/chapter-review.test.ts",
  "test/archives.test.ts",
  "test/small-counterexamples.test.ts",
  "test/sandbox-removal.test.ts",
  "test/coverage.test.ts",
];
const ROOT = fileURLToPath(new URL(".", import.meta.url));
const stale = SLOWEST_FIRST.filter((file) => !existsSync(`${ROOT}${file}`));
if (stale.length > 0) throw new Error(`vitest.config.ts: SLOWEST_FIRST names files that do not exist: ${stale.join(", ")}`);

/** The files of `SLOWEST_FIRST` in its order, then the rest in Vitest's own (its cache's, when there is one). */
class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = SLOWEST_FIRST.indexOf(relative(ROOT, file.moduleId));
      return at < 0 ? SLOWEST_FIRST.length : at;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Vitest's default on 2 cores is one worker, which runs every file in turn; many files wait on
    // servers, children and time budgets, so two keep both cores busy (431 s against 714 s here).
    maxWorkers: 2,
    sequence: { sequencer: SlowestFirst },
  },
});
