// @ts-check
// Mutation testing, in two runs with one set of options. This file is the run over the gate code, the
// chapter's tool layer, which must score 100 % (npm run mutate:check); stryker.rest.config.mjs is the
// run over everything else. Static mutants (code that runs once, when a module loads: the tool specs,
// the default limits, the messages) are tested here like any other, each against the whole suite,
// because a gate's constants are part of the gate.
//
// Incremental: Stryker keeps its results in .stryker-cache/ (gitignored: full copies of every source
// and test file), so a second run on the same machine tests again only the mutants whose code or
// covering tests changed (`--force` tests all). What is committed is the summary that
// `npm run mutate:summary` draws from them (docs/mutation.md says why and how).

/** The chapter's tool layer (the four gates, the tools that apply them, failure, approval and the agent loop) and the verified tools. */
export const GATE_FILES = [
  "src/gates/schema.ts",
  "src/gates/fields.ts",
  "src/gates/workspace-path.ts",
  "src/gates/is-inside.ts",
  "src/gates/truncate.ts",
  "src/gates/read-truncated.ts",
  "src/gates/failure.ts",
  "src/agent/approval.ts",
  "src/agent/agent.ts",
  "src/tools/read.ts",
  "src/tools/write.ts",
  "src/tools/bash.ts",
  "src/tools/workspace-tools.ts",
  // The verified tools are security code too: the walk by descriptor, the procfs check it rests on,
  // and the tool set built on them. (src/verified/contract.ts is left out: it only re-exports, so it
  // has no code to mutate.)
  "src/verified/open-beneath.ts",
  "src/verified/procfs.ts",
  "src/verified/verified-tools.ts",
];

/** Every gate file must score this; Stryker's break sees the run as a whole, so any survivor fails it. */
export const GATE_BAR = 100;

/**
 * The options both runs share; each adds what it mutates and where its results go.
 * @type {import("@stryker-mutator/api/core").PartialStrykerOptions}
 */
const SHARED = {
  testRunner: "vitest",
  vitest: { configFile: "vitest.stryker.config.ts" },
  coverageAnalysis: "perTest",
  checkers: ["typescript"],
  tsconfigFile: "tsconfig.json",
  reporters: ["html", "json", "clear-text", "progress"],
  concurrency: 2,
  tempDirName: ".stryker-tmp",
  // Only the mutated code needs Stryker's `// @ts-nocheck`; tests read fixtures and docs as text
  // (the lessons compare each page with its fixture file), so those must reach the sandbox unchanged.
  disableTypeChecks: "src/**/*.ts",
  // The dry run is the whole suite, one file at a time, with per-test coverage; on a shared 2-core
  // machine it passes Stryker's default 5 minutes (27 minutes at a load of 19, where 20 timed out),
  // and a timed-out dry run ends the run before any mutant.
  dryRunTimeoutMinutes: 45,
  incremental: true,
};

/**
 * @param {string} name the run's name: its reports go to reports/mutation/NAME/, its results to
 *   .stryker-cache/NAME.incremental.json
 * @param {number} bar the score below which the run fails (`npm run mutate` exits 1)
 * @returns {import("@stryker-mutator/api/core").PartialStrykerOptions}
 */
export function part(name, bar) {
  return {
    ...SHARED,
    thresholds: { high: 100, low: bar, break: bar },
    htmlReporter: { fileName: `reports/mutation/${name}/index.html` },
    jsonReporter: { fileName: `reports/mutation/${name}/mutation.json` },
    incrementalFile: `.stryker-cache/${name}.incremental.json`,
  };
}

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default { ...part("gates", GATE_BAR), mutate: GATE_FILES };
