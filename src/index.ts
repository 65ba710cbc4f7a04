/**
 * The public API of workspace-gates: the chapter's tool layer, its gates, approval and agent loop, and
 * the descriptor-verified tools that close the chapter's TOCTOU window on Linux.
 */
export { createWorkspaceTools, type WorkspaceToolsOptions } from "./workspace-tools.js";
export { createVerifiedWorkspaceTools, type VerifiedWorkspaceToolsOptions } from "./verified/verified-tools.js";
export { procfsProblem, PROC_SUPER_MAGIC } from "./verified/procfs.js";
export { MAX_SYMLINKS } from "./verified/open-beneath.js";
export { NOT_REGULAR_FILE, hardlinkRefusal } from "./verified/verify-opened.js";
export { unverifiedNotice } from "./verified/best-effort.js";
export { readTool, INVALID_READ_INPUT } from "./tools/read.js";
export { writeTool, INVALID_WRITE_INPUT } from "./tools/write.js";
export { bashTool, bashLimits, DEFAULT_BASH_LIMITS, INVALID_BASH_INPUT, type BashLimits } from "./tools/bash.js";
export { schema, type ToolSpec, type ObjectSchema, type JsonSchemaProperty } from "./schema.js";
export { asObject, stringField } from "./fields.js";
export {
  workspacePath,
  workspaceBoundary,
  nearestExistingAncestor,
  ESCAPE_MESSAGE,
  NUL_MESSAGE,
  type Boundary,
  type FsApi,
} from "./workspace-path.js";
export { isInside, type PathApi } from "./is-inside.js";
export { MAX_READ_CHARS, truncateHead, truncateTail, truncateRead, truncationMarker } from "./truncate.js";
export { failure } from "./failure.js";
export type { Tool, ToolResult } from "./tool.js";
export {
  approveAll,
  denyBashByDefault,
  BASH_NEEDS_POLICY,
  type Approval,
  type BeforeToolCall,
  type ToolCall,
} from "./approval.js";
export {
  runAgent,
  scriptedProvider,
  DEFAULT_MAX_TURNS,
  type AgentOptions,
  type AgentRun,
  type Message,
  type Provider,
  type ProviderTurn,
} from "./agent.js";
