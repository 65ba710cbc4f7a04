/**
 * The contract every tool of the chapter satisfies: a spec the model sees, and an executor that takes
 * untrusted input and always answers with a result.
 *
 * Promises (of every tool this package builds): `execute` resolves, never rejects; a failure is a
 * result with `isError: true`.
 */
import type { ToolSpec } from "./schema.js";

export interface ToolResult {
  content: string;
  isError?: boolean;
}

export interface Tool {
  spec: ToolSpec;
  execute(input: unknown, signal?: AbortSignal): Promise<ToolResult>;
}
