/**
 * `workspace-gates/arbitraries`: the audit's fast-check arbitraries, and what using them outside this
 * repository needs: the sandbox their symbolic candidates become paths in (`createSandbox`,
 * `candidateText`, `materialize`), and `pathNear`, concrete paths around a root of your own.
 * docs/arbitraries.md shows both; test/arbitraries-doc.test.ts runs its example.
 */
export * from "../audit/arbitraries.js";
export { pathNear, type PathNearConstraints } from "./path-near.js";
export { createSandbox, SECRET, SIMILAR_PREFIX_SUFFIXES, GUARD_DEPTH, type Sandbox } from "../sandbox/sandbox.js";
export { materialize, renderTree, areaPath, linkText, type Area, type LinkTarget, type Tree, type TreeEntry } from "../sandbox/tree.js";
