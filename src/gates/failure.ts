/**
 * The single channel through which a tool reports that it did not do its job.
 *
 * Promises: any thrown value becomes `{ content, isError: true }` whose content is the error's message
 * (prefixed with the tool's name when given), never a stack trace, never an exception.
 * Does not promise: that the message hides host details; a Node fs error names the absolute path.
 */
import type { ToolResult } from "./tool.js";

export function failure(cause: unknown, tool?: string): ToolResult {
  const message = describe(cause);
  return { content: tool === undefined ? message : `${tool}: ${message}`, isError: true };
}

function describe(cause: unknown): string {
  if (cause instanceof Error) return cause.message;
  try {
    return String(cause);
  } catch {
    // `String(Object.create(null))` throws; the failure channel must not.
    return Object.prototype.toString.call(cause);
  }
}
