// The test run Stryker uses for each mutant. Stryker stops at the first failing test (bail), so the
// order of the test files decides how long a killed mutant costs: focused, fast files go first, and
// the broad, slow ones (the bad-input table, the property audit) only run for mutants the others
// miss. Vitest's own order is the opposite (slowest first, from a timing cache), which suits a full
// run on many workers, not a search for the first failure on one.
import { basename } from "node:path";
import { defineConfig, mergeConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import base from "./vitest.config.js";

/** Every test file by name, cheapest first; test/mutation-score.test.ts checks that none is missing. */
export const CHEAPEST_FIRST = [
  "layout",
  "docs-figures",
  "peers",
  "advisories",
  "mutation-score",
  "cli",
  "contract-doc",
  "suppressions",
  "verdict",
  "counterexample-leaving",
  "audit-budget",
  "package-types",
  "fields",
  "failure",
  "tool-specs",
  "truncate",
  "read-truncated",
  "workspace-path",
  "agent",
  "read-write",
  "chapter-review",
  "descriptor-leaks",
  "tool-path",
  "sandbox",
  "bash",
  "bash-cancellation",
  "verified-platform",
  "verified-pin",
  "verified-open-beneath",
  "verified-races",
  "verified-tools",
  "verified-toctou",
  "corpora",
  "memfs",
  "known-limits",
  "toctou-png",
  "toctou-side-effects",
  "toctou",
  "toctou-racer",
  "toctou-targets",
  "mcp-registry",
  "lessons",
  "lesson-command",
  "toctou-svg",
  "list-tools",
  "report-html",
  "regression-test",
  "arbitraries",
  "openings",
  "deep-trees",
  "pinned-call",
  "small-counterexamples",
  "slow-target",
  "verdict-words",
  "arbitraries-doc",
  "mcp",
  "server-environment",
  "sandbox-removal",
  "mcp-dying",
  "mcp-endings",
  "audit-reports",
  "audit-findings",
  "counterexamples",
  "coverage",
  "protected",
  "audit-conformance",
  "audit-run",
  "audit-shard",
  "kill-matrix",
  "agent-kill-matrix",
  "surface",
  "shapes",
  "archives",
  "race",
  "bad-input",
  "audit",
];

function rank(file: string): number {
  const index = CHEAPEST_FIRST.indexOf(basename(file, ".test.ts"));
  // A test file not listed yet runs before the two slowest, so it is neither skipped nor last.
  return index === -1 ? CHEAPEST_FIRST.length - 2.5 : index;
}

class CheapestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return [...files].sort((a, b) => rank(a.moduleId) - rank(b.moduleId));
  }
}

// One file at a time, so that the cheapest file that kills a mutant is the one that runs first.
export default mergeConfig(base, defineConfig({ test: { maxWorkers: 1, sequence: { sequencer: CheapestFirst } } }));
