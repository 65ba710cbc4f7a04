/**
 * The approval hook: the calling layer, not the tool, decides whether a call runs at all.
 *
 * Promises: `denyBashByDefault` refuses every bash call with the chapter's message and lets read and
 * write through unchanged; `approveAll` lets everything through (tests and deliberate deployments).
 * A hook may replace the input; the tool then checks the replacement through its own gates, since the
 * gates live in the executor, not here.
 * Does not promise: any judgement of what a command does. There is no blocklist of dangerous commands.
 */
import { BASH_NEEDS_POLICY } from "../gates/messages.js";

export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
}

export type Approval = { approved: true; input?: unknown } | { approved: false; reason: string };

export type BeforeToolCall = (call: ToolCall) => Approval | Promise<Approval>;


export const denyBashByDefault: BeforeToolCall = (call) =>
  call.name === "bash" ? { approved: false, reason: BASH_NEEDS_POLICY } : { approved: true };

export const approveAll: BeforeToolCall = () => ({ approved: true });
