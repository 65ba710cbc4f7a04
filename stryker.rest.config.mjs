// @ts-check
// The mutation run over the code outside the gates (the audit, the TOCTOU demo, the verified tools,
// the agent loop, the CLI), held to a lower bar (scripts/mutation-score.ts says which and why).
// Static mutants are not run here: each costs a run of the whole suite (a minute or more on 2 cores)
// instead of the few tests that cover it, and most sit in module-level arbitraries, property
// descriptions and help text. They are counted and reported as not run, never as killed.
import { GATE_FILES, part } from "./stryker.config.mjs";

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  ...part("rest"),
  mutate: ["src/**/*.ts", ...GATE_FILES.map((file) => `!${file}`)],
  ignoreStatic: true,
};
