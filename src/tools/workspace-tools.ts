/**
 * `createWorkspaceTools(root)`: the chapter's three tools, all bound to one workspace root.
 *
 * Promises: the root comes from the caller at construction and never from tool input, and its real
 * path is pinned at the first call (`workspaceBoundary`: a root replaced by a symlink later does not
 * move the boundary); every path a tool touches is checked by the chapter's `workspacePath` steps
 * against it; bash limits default to the chapter's values.
 * Does not promise: OS-level isolation. The gates are application-layer checks (see SECURITY.md).
 */
import type { Tool } from "../gates/tool.js";
import { type BashLimits, bashLimits, bashTool } from "./bash.js";
import { readTool } from "./read.js";
import { writeTool } from "./write.js";
import { type FsApi, workspaceBoundary } from "../gates/workspace-path.js";

export interface WorkspaceToolsOptions {
  /** Overrides of the chapter's bash limits (10 s, 64 KiB, 64 KiB), for tests and deployments. */
  bash?: Partial<BashLimits>;
  /** The `lstat`/`realpath` of the path check; the real `node:fs/promises` by default. */
  fsApi?: FsApi;
}

/** The three tools, in this order, so that `const [read, write, bash] = createWorkspaceTools(root)` is typed. */
export type WorkspaceTools = [read: Tool, write: Tool, bash: Tool];

export function createWorkspaceTools(root: string, options: WorkspaceToolsOptions = {}): WorkspaceTools {
  const boundary = workspaceBoundary(root, options.fsApi);
  return [readTool(boundary), writeTool(boundary), bashTool(boundary, bashLimits(options.bash))];
}
