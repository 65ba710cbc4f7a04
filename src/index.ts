/**
 * The public API of workspace-gates: the chapter's tool layer, its gates, approval and agent loop, and
 * the descriptor-verified tools that close the chapter's TOCTOU window on Linux.
 */
export { createWorkspaceTools, type WorkspaceTools, type WorkspaceToolsOptions } from "./tools/workspace-tools.js";
export { createVerifiedWorkspaceTools, unverifiedNotice, type VerifiedWorkspaceToolsOptions } from "./verified/verified-tools.js";
export { procfsProblem, PROC_SUPER_MAGIC } from "./verified/procfs.js";
export { MAX_SYMLINKS, hardlinkRefusal } from "./verified/open-beneath.js";
export { readTool, DEFAULT_READ_TIMEOUT_MS, readTimedOut } from "./tools/read.js";
export { writeTool } from "./tools/write.js";
export { bashTool, bashLimits, DEFAULT_BASH_LIMITS, type BashLimits } from "./tools/bash.js";
export {
  INVALID_READ_INPUT,
  INVALID_WRITE_INPUT,
  INVALID_BASH_INPUT,
  ESCAPE_MESSAGE,
  NUL_MESSAGE,
  NOT_REGULAR_FILE,
  BASH_NEEDS_POLICY,
  INVALID_SIGNAL,
  READ_ABORTED,
  WRITE_ABORTED,
  NOT_UTF8_NAME,
} from "./gates/messages.js";
export { schema, type ToolSpec, type ObjectSchema, type JsonSchemaProperty } from "./gates/schema.js";
export { asObject, stringField } from "./gates/fields.js";
export {
  workspacePath,
  workspaceBoundary,
  nearestExistingAncestor,
  inWorkspaceTerms,
  type Boundary,
  type CheckedPath,
  type FsApi,
} from "./gates/workspace-path.js";
export { isInside, type PathApi } from "./gates/is-inside.js";
export { MAX_READ_CHARS, truncateHead, truncateTail, truncateRead, truncationMarker } from "./gates/truncate.js";
export { failure } from "./gates/failure.js";
export type { Tool, ToolResult } from "./gates/tool.js";
export {
  approveAll,
  denyBashByDefault,
  type Approval,
  type BeforeToolCall,
  type ToolCall,
} from "./agent/approval.js";
export {
  runAgent,
  scriptedProvider,
  DEFAULT_MAX_TURNS,
  type AgentOptions,
  type AgentRun,
  type Message,
  type Provider,
  type ProviderTurn,
} from "./agent/agent.js";
