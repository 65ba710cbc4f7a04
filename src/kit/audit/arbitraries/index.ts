/**
 * fast-check arbitraries for attacking a workspace boundary, small and composable, exported as
 * `workspace-gates/arbitraries` for other suites. Each is a function taking a constraints object, in
 * fast-check's style; bounds hold by construction, never by `.filter`.
 *
 * - names.ts, climbs.ts: components that attack string handling, and `..` placed among them;
 * - candidates.ts: candidate paths (relative, beside the root, absolute, Windows, NUL, over-long);
 * - trees.ts: workspace trees and candidates aimed through their links;
 * - workspace-root.ts: the root's names and the spellings a caller may hand over;
 * - tool-input.ts: tool inputs by class (each way a field can fail to be a string, each container);
 * - operation-input.ts: one call's input for an operation of the catalogue, and search patterns;
 * - protected.ts: the entries the user protects inside the workspace, nested, twinned and linked;
 * - openings.ts, twins.ts: the attacks every tree opens with (optional arguments swept, names beside
 *   their rewrites, special files, long chains and paths), each always there and shrunk away when a
 *   failure does not need it (droppable.ts).
 * May import the sandbox (kit/sandbox); nothing in the audit's properties.
 */
export * from "./archives.js";
export * from "./candidates.js";
export * from "./climbs.js";
export * from "./deep-trees.js";
export * from "./droppable.js";
export * from "./names.js";
export * from "./openings.js";
export * from "./operation-input.js";
export * from "./protected.js";
export * from "./tool-input.js";
export * from "./trees.js";
export * from "./twins.js";
export * from "./workspace-root.js";
