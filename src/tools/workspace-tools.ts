/**
 * `createWorkspaceTools(root)`: the chapter's three tools, all bound to one workspace root.
 *
 * Promises: the root comes from the caller at construction and never from tool input, and its real
 * path is pinned right here, at construction (`workspaceBoundary`: a relative root is resolved against
 * the working directory of this moment, and a root replaced by a symlink later does not move the
 * boundary); construction throws when the root is missing, not a directory, or not spelled in valid
 * UTF-8. Every path a tool touches is checked by the chapter's `workspacePath` steps against it; bash
 * limits default to the chapter's values, the read time bound to `DEFAULT_READ_TIMEOUT_MS` (10 s).
 * Does not promise: OS-level isolation. The gates are application-layer checks (see SECURITY.md).
 * Tools created later on the same root pin what its name means then: if a bash job of an earlier run
 * replaced the root by a link, the new tools work wherever that link leads.
 */
import type { Tool } from "../gates/tool.js";
import { type BashLimits, bashLimits, bashTool } from "./bash.js";
import { DEFAULT_READ_TIMEOUT_MS, readTool } from "./read.js";
import { writeTool } from "./write.js";
import { type FsApi, workspaceBoundary } from "../gates/workspace-path.js";

export interface WorkspaceToolsOptions {
  /** Overrides of the chapter's bash limits (10 s, 64 KiB, 64 KiB), for tests and deployments. */
  bash?: Partial<BashLimits>;
  /**
   * The `lstat`/`realpath` of the path check (synchronous `node:fs` calls by default). The write tool
   * also takes the leaf's kind and mode from this `lstat`: inject lookups of the real disk (faults
   * wrapped around them), not of another filesystem.
   */
  fsApi?: FsApi;
  /** read's time bound: after this many milliseconds a read stops and answers a timeout (default 10 s). */
  readTimeoutMs?: number;
}

/** The three tools, in this order, so that `const [read, write, bash] = createWorkspaceTools(root)` is typed. */
export type WorkspaceTools = [read: Tool, write: Tool, bash: Tool];

export function createWorkspaceTools(root: string, options: WorkspaceToolsOptions = {}): WorkspaceTools {
  const boundary = workspaceBoundary(root, options.fsApi);
  return [readTool(boundary, options.readTimeoutMs ?? DEFAULT_READ_TIMEOUT_MS), writeTool(boundary), bashTool(boundary, bashLimits(options.bash))];
}
