/**
 * `createVerifiedWorkspaceTools(root)`: the chapter's three tools with read and write verified by
 * descriptor on Linux, closing the check-then-open window the chapter leaves open (SECURITY.md).
 *
 * Promises: the same contract as `createWorkspaceTools` (`[read, write, bash]`, same specs, input
 * errors, truncation and bash limits; `execute` never rejects). At construction it checks that
 * `/proc/self/fd` is procfs and pins the root by descriptor, synchronously; without procfs it throws,
 * unless `bestEffort` is set, in which case it returns the chapter's tools and every result says it
 * is unverified. A file with more than one hard link is refused unless `allowHardlinks` is set.
 * `fsApi` reaches the chapter's path check only (fault injection, the TOCTOU demo's swap).
 * Does not promise: any confinement of bash, which runs in the root's real path as pinned and can do
 * anything this process can; nor protection against bind mounts or a process that can rename
 * directories from inside the workspace to outside.
 */
import type { Tool } from "../gates/tool.js";
import { bashLimits, bashTool } from "../tools/bash.js";
import { workspaceBoundary } from "../gates/workspace-path.js";
import { type WorkspaceToolsOptions, createWorkspaceTools } from "../tools/workspace-tools.js";
import { announceUnverified } from "./best-effort.js";
import { pinRoot } from "./pinned-root.js";
import { procfsProblem } from "./procfs.js";
import { verifiedReadTool } from "./verified-read.js";
import { verifiedWriteTool } from "./verified-write.js";

export interface VerifiedWorkspaceToolsOptions extends WorkspaceToolsOptions {
  /** Accept files with more than one hard link; off by default, since another link may be outside. */
  allowHardlinks?: boolean;
  /** Without procfs, fall back to the chapter's tools, each result marked unverified, instead of throwing. */
  bestEffort?: boolean;
}

export function createVerifiedWorkspaceTools(root: string, options: VerifiedWorkspaceToolsOptions = {}): Tool[] {
  const limits = bashLimits(options.bash);
  const problem = procfsProblem();
  if (problem !== undefined) {
    if (options.bestEffort !== true)
      throw new Error(
        `verified workspace tools need Linux procfs: ${problem}. Pass { bestEffort: true } to use the chapter's checks instead, with every result marked unverified.`,
      );
    return createWorkspaceTools(root, options).map((tool) => announceUnverified(tool, problem));
  }
  const pinned = pinRoot(root);
  const settings = { allowHardlinks: options.allowHardlinks === true, fsApi: options.fsApi };
  return [verifiedReadTool(pinned, settings), verifiedWriteTool(pinned, settings), bashTool(workspaceBoundary(pinned.pinnedPath, options.fsApi), limits)];
}
