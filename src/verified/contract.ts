/**
 * The verified tools under the audit contract (docs/contract.md), so `workspace-gates audit
 * src/verified/contract.ts` attacks them with every property the chapter's tools face.
 *
 * Exports `createWorkspaceTools` (the verified tool set, `createVerifiedWorkspaceTools` with its
 * default options, as the registry's `verified` entry builds it: src/kit/sandbox/tool-sets.ts), and the
 * chapter's own `workspacePath` and `isInside`: the verified tools run that very check first and refuse
 * what it refuses, so its properties hold for them too. And the package's own `runAgent`, so the calling
 * layer's properties run their loop over the verified tools.
 * Does not promise: that `workspacePath` describes everything the verified tools refuse. The walk by
 * descriptor that follows the check refuses more (hardlinks, links that climb above the root and come
 * back); the path-check properties audit the check, the tool properties audit the whole.
 */
export { createVerifiedWorkspaceTools as createWorkspaceTools } from "./verified-tools.js";
export { workspacePath } from "../gates/workspace-path.js";
export { isInside } from "../gates/is-inside.js";
export { runAgent } from "../agent/agent.js";
