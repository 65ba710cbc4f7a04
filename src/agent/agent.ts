/**
 * A minimal agent loop, to show where tool failures go.
 *
 * Promises: each turn sends the whole transcript and the tool specs to the provider; every tool call
 * gets exactly one tool message; an unknown tool, a refused approval and a result with `isError` are
 * recorded as error tool messages and the loop goes on, so the model can correct itself. A broken tool
 * or policy stops the run instead of being retried by the model: its failure is recorded as the call's
 * error message, then rethrown. Broken means: the approval hook throws or rejects (recorded as
 * `<tool>: approval hook failed, the call did not run: <message>`; the call never runs), or answers
 * anything but `{ approved: true, input? }` or `{ approved: false, reason: string }` (the same, and a
 * TypeError is thrown: a malformed approval never approves); the tool throws (recorded as
 * `<tool>: <message>`), or answers anything but `{ content: string, isError?: boolean }` (the same,
 * with a TypeError). The loop stops when the provider answers without tool calls or after `maxTurns`.
 * Once `signal` aborts, the loop starts nothing new: no further provider request, hook or tool call.
 * A call of the current turn that has not started (or whose hook was still pending: the loop stops
 * waiting for it) gets the error message `<tool>: aborted: … it did not run`, and the run ends with
 * `stopReason: "aborted"`; a call already running gets the signal and is awaited.
 * Does not promise: anything a real provider needs (streaming, retries, token budgets); that a hook
 * which never settles ends the run without a signal (it holds the run until the signal aborts).
 */
import { type Approval, type BeforeToolCall, type ToolCall, denyBashByDefault } from "./approval.js";
import { failure } from "../gates/failure.js";
import { ABORTED_BEFORE_CALL } from "../gates/messages.js";
import type { ToolSpec } from "../gates/schema.js";
import type { Tool, ToolResult } from "../gates/tool.js";

export type Message =
  | { role: "user"; content: string }
  | { role: "assistant"; text: string; toolCalls: ToolCall[] }
  | { role: "tool"; toolCallId: string; name: string; content: string; isError: boolean };

export interface ProviderTurn {
  text?: string;
  toolCalls?: ToolCall[];
}

/** What the loop needs of a model: transcript and tool specs in, text and/or tool calls out. */
export interface Provider {
  next(request: { messages: readonly Message[]; tools: readonly ToolSpec[]; signal?: AbortSignal }): Promise<ProviderTurn>;
}

export interface AgentOptions {
  provider: Provider;
  tools: readonly Tool[];
  /** Decides whether each call runs; denies bash by default, as the chapter's main entry does. */
  beforeToolCall?: BeforeToolCall;
  /** Upper bound on provider calls, so a model that never stops calling tools cannot loop forever. */
  maxTurns?: number;
  signal?: AbortSignal;
  /** Sees every message as it is recorded, including the failure recorded before a rethrow. */
  onMessage?: (message: Message) => void;
}

export interface AgentRun {
  messages: Message[];
  stopReason: "done" | "max_turns" | "aborted";
}

export const DEFAULT_MAX_TURNS = 20;

export async function runAgent(prompt: string, options: AgentOptions): Promise<AgentRun> {
  const { provider, tools, beforeToolCall = denyBashByDefault, maxTurns = DEFAULT_MAX_TURNS, signal, onMessage } = options;
  const specs = tools.map((tool) => tool.spec);
  const messages: Message[] = [];
  const record = (message: Message) => {
    messages.push(message);
    onMessage?.(message);
  };
  record({ role: "user", content: prompt });
  for (let turn = 0; ; turn++) {
    if (signal?.aborted === true) return { messages, stopReason: "aborted" };
    if (turn >= maxTurns) return { messages, stopReason: "max_turns" };
    const reply = await provider.next({ messages, tools: specs, ...(signal === undefined ? {} : { signal }) });
    const toolCalls = reply.toolCalls ?? [];
    record({ role: "assistant", text: reply.text ?? "", toolCalls });
    if (toolCalls.length === 0) return { messages, stopReason: "done" };
    for (const call of toolCalls) {
      const outcome = await runToolCall(call, tools, beforeToolCall, signal);
      record(toolMessage(call, outcome.result));
      if (outcome.rethrow !== undefined) throw outcome.rethrow.error;
    }
  }
}

/** What one call comes to: the result to record, and, when the hook or the tool is broken, what to rethrow. */
interface CallOutcome {
  result: ToolResult;
  rethrow?: { error: unknown };
}

const MALFORMED_APPROVAL = "the hook answered neither { approved: true, input? } nor { approved: false, reason: string }";
const MALFORMED_RESULT = "the tool answered something other than { content: string, isError?: boolean }";

async function runToolCall(
  call: ToolCall,
  tools: readonly Tool[],
  beforeToolCall: BeforeToolCall,
  signal: AbortSignal | undefined,
): Promise<CallOutcome> {
  const notStarted = { result: { content: `${call.name}: ${ABORTED_BEFORE_CALL}`, isError: true } };
  const aborted = () => signal?.aborted === true;
  if (aborted()) return notStarted;
  const tool = tools.find((candidate) => candidate.spec.name === call.name);
  if (tool === undefined) return { result: { content: `unknown tool: ${call.name}`, isError: true } };
  let approval: Approval;
  try {
    const answer = await untilAborted(async () => beforeToolCall(call), signal);
    // Also when the hook answered first: an abort that fired meanwhile wins over its approval.
    if (aborted()) return notStarted;
    approval = wellFormedApproval(answer);
  } catch (error) {
    const { content } = failure(error);
    return { result: { content: `${call.name}: approval hook failed, the call did not run: ${content}`, isError: true }, rethrow: { error } };
  }
  if (!approval.approved) return { result: { content: approval.reason, isError: true } };
  try {
    return { result: wellFormedResult(await tool.execute("input" in approval ? approval.input : call.input, signal)) };
  } catch (error) {
    return { result: failure(error, call.name), rethrow: { error } };
  }
}

/** What `run` settles to, or `undefined` as soon as `signal` aborts (the pending promise is then ignored). */
function untilAborted(run: () => Promise<unknown>, signal: AbortSignal | undefined): Promise<unknown> {
  if (signal === undefined) return run();
  return new Promise((resolve, reject) => {
    const stop = () => resolve(undefined);
    // Listening before the hook runs, so a hook that aborts and then never settles still lets go.
    signal.addEventListener("abort", stop);
    run()
      .then(resolve, reject)
      .finally(() => signal.removeEventListener("abort", stop));
  });
}

// A hook or tool written in plain JavaScript, or typed loosely, can answer anything; only the exact
// shapes count, so that e.g. `{ approved: "yes" }` can never approve a call.
function wellFormedApproval(answer: unknown): Approval {
  const approval = answer as Partial<Record<"approved" | "reason", unknown>> | null | undefined;
  if (approval?.approved === true) return approval as Approval;
  if (approval?.approved === false && typeof approval.reason === "string") return approval as Approval;
  throw new TypeError(MALFORMED_APPROVAL);
}

function wellFormedResult(answer: unknown): ToolResult {
  const result = answer as Partial<Record<"content" | "isError", unknown>> | null | undefined;
  if (typeof result?.content === "string" && (result.isError === undefined || typeof result.isError === "boolean"))
    return result as ToolResult;
  throw new TypeError(MALFORMED_RESULT);
}

function toolMessage(call: ToolCall, result: ToolResult): Message {
  return { role: "tool", toolCallId: call.id, name: call.name, content: result.content, isError: result.isError === true };
}

/** A provider that plays back fixed turns, for tests and demos; it fails loudly when the script runs out. */
export function scriptedProvider(turns: readonly ProviderTurn[]): Provider & { readonly requests: Message[][] } {
  const requests: Message[][] = [];
  return {
    requests,
    async next({ messages }) {
      const turn = turns[requests.length];
      requests.push([...messages]);
      if (turn === undefined) throw new Error(`scripted provider has no turn ${requests.length}`);
      return turn;
    },
  };
}
