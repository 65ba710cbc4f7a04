/**
 * A minimal agent loop, to show where tool failures go.
 *
 * Promises: each turn sends the whole transcript and the tool specs to the provider; every tool call
 * gets exactly one tool message; an unknown tool, a refused approval and a result with `isError` are
 * recorded as error tool messages and the loop goes on, so the model can correct itself; an exception
 * thrown by a tool or by the approval hook is recorded as a failure and then rethrown, so a broken
 * tool or policy stops the run instead of being retried by the model (a throwing hook never lets the
 * call run). The loop stops when the provider answers without tool calls or after `maxTurns`.
 * Does not promise: anything a real provider needs (streaming, retries, token budgets).
 */
import { type BeforeToolCall, type ToolCall, denyBashByDefault } from "./approval.js";
import { failure } from "./failure.js";
import type { ToolSpec } from "./schema.js";
import type { Tool, ToolResult } from "./tool.js";

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
  stopReason: "done" | "max_turns";
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
  for (let turn = 0; turn < maxTurns; turn++) {
    const reply = await provider.next({ messages, tools: specs, ...(signal === undefined ? {} : { signal }) });
    const toolCalls = reply.toolCalls ?? [];
    record({ role: "assistant", text: reply.text ?? "", toolCalls });
    if (toolCalls.length === 0) return { messages, stopReason: "done" };
    for (const call of toolCalls) {
      let result: ToolResult;
      try {
        result = await runToolCall(call, tools, beforeToolCall, signal);
      } catch (error) {
        record(toolMessage(call, failure(error, call.name)));
        throw error;
      }
      record(toolMessage(call, result));
    }
  }
  return { messages, stopReason: "max_turns" };
}

async function runToolCall(
  call: ToolCall,
  tools: readonly Tool[],
  beforeToolCall: BeforeToolCall,
  signal: AbortSignal | undefined,
): Promise<ToolResult> {
  const tool = tools.find((candidate) => candidate.spec.name === call.name);
  if (tool === undefined) return { content: `unknown tool: ${call.name}`, isError: true };
  const approval = await beforeToolCall(call);
  if (!approval.approved) return { content: approval.reason, isError: true };
  return tool.execute("input" in approval ? approval.input : call.input, signal);
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
