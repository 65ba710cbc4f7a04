// @ts-check
// The mutation run over the code outside the gates (the audit, the TOCTOU demo, the CLI), held to a
// lower bar (REST_BAR says which and why).
// Static mutants are not run here: each costs a run of the whole suite (a minute or more on 2 cores)
// instead of the few tests that cover it, and most sit in module-level arbitraries, property
// descriptions and help text. They are counted and reported as not run, never as killed.
import { GATE_FILES, part } from "./stryker.config.mjs";

/**
 * The score the rest must keep, taken together: a ratchet, set just under what the last rest run
 * measured over the files that are the rest now, so that a change which weakens the tests of this
 * code fails CI, and raised as tests are added. It is not a claim that this code is well defended.
 * It was 55 (the first full run: 56.52 %); it is 53 since the agent loop and the verified tools moved
 * into the gate run and the verified files that no longer exist left the summary: what stayed measured
 * 53.09 % in that same run (those files scored above the rest's average). Survivors cluster in
 * reporting and demo code whose text no test reads (the TOCTOU report alone has 110), and in the
 * audit's own machinery (arbitraries, trees, the reference resolver, the properties), where a weaker
 * generator or oracle still passes the reference and the kill matrix is the test that matters.
 */
export const REST_BAR = 53;

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  ...part("rest", REST_BAR),
  mutate: ["src/**/*.ts", ...GATE_FILES.map((file) => `!${file}`)],
  ignoreStatic: true,
};
