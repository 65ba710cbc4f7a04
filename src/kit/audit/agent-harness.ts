/**
 * What the calling-layer properties share: real tools that report each call they get, the traces a
 * call leaves in the workspace, the transcript rule every run must keep, and a bounded wait.
 *
 * The tools are the target's own (`createWorkspaceTools`) when it exports them, else this package's:
 * the loop is judged over real tools in the audit's sandbox, never over stubs.
 */
import { readdir } from "node:fs/promises";
import { type CallSpec, inputFor, marker, markerIn } from "./agent-calls.js";
import { Violation, violation } from "./runner/property.js";
import type { AuditTarget } from "../operations/target.js";
import type { Tool } from "../../gates/tool.js";
import { type Message, type ToolCall, createWorkspaceTools } from "../../index.js";

/** The package's loop parts the properties drive a target with (they import the product only through here). */
export { approveAll, scriptedProvider, type AgentRun, type Message, type Provider, type ProviderTurn, type ToolCall } from "../../index.js";

/**
 * Why a calling-layer property does not judge a target: it exports no loop. Not applicable rather than
 * skipped, so that a fork of the tools alone is no regression against a baseline that audited a loop.
 */
export function withoutRunAgent(target: AuditTarget): string | undefined {
  return target.runAgent === undefined ? "the module exports no runAgent, so the calling layer is not audited" : undefined;
}

/** How long a loop may take to end once its signal aborted: it has nothing left to wait for. */
export const AFTER_ABORT_PATIENCE_MS = 3_000;

/** A call of a script, numbered across all its turns: its marker is `call-<index>`. */
export interface NumberedCall<T extends CallSpec = CallSpec> {
  index: number;
  spec: T;
  call: ToolCall;
}

/** Numbers the calls of each turn and builds them: id = marker unless `ids` gives one, input shaped for the aim unless `input` does. */
export function numbered<T extends CallSpec>(
  turns: readonly (readonly T[])[],
  shape: { id?: (index: number) => string; input?: (spec: T, index: number) => unknown } = {},
): NumberedCall<T>[][] {
  let index = 0;
  return turns.map((turn) =>
    turn.map((spec) => {
      const current = index++;
      const input = shape.input === undefined ? inputFor(spec.aim, current) : shape.input(spec, current);
      return { index: current, spec, call: { id: shape.id?.(current) ?? marker(current), name: spec.name, input } };
    }),
  );
}

export interface ToolUse {
  tool: string;
  /** The marker of the call whose input the tool got, if any. */
  marker: number | undefined;
  input: unknown;
}

/** The loop's tools over `root`, each reporting every execute it gets (before it runs) to `onUse`. */
export function reportingTools(target: AuditTarget, root: string, onUse: (use: ToolUse) => void, around?: (result: Promise<unknown>) => Promise<unknown>): Tool[] {
  const tools = target.createWorkspaceTools?.(root) ?? createWorkspaceTools(root);
  return tools.map((tool) => ({
    spec: tool.spec,
    execute(input: unknown, signal?: AbortSignal) {
      onUse({ tool: tool.spec.name, marker: markerIn(input), input });
      const result = tool.execute(input, signal);
      return (around?.(result) ?? result) as ReturnType<Tool["execute"]>;
    },
  }));
}

/** The markers whose trace (the file a write made or a bash touched) is in the workspace. */
export async function traces(root: string): Promise<Set<number>> {
  const found = new Set<number>();
  for (const name of await readdir(root)) {
    const match = /^call-(\d+)\.(?:txt|ran)$/.exec(name);
    if (match !== null) found.add(Number(match[1]));
  }
  return found;
}

/** Traces and tool uses of calls that must not have run: a violation naming the first. */
export function requireNotRun<T extends CallSpec>(notRun: readonly NumberedCall<T>[], uses: readonly ToolUse[], traced: ReadonlySet<number>, why: (call: NumberedCall<T>) => string): void {
  for (const call of notRun) {
    const use = uses.find((candidate) => candidate.marker === call.index);
    if (use !== undefined) violation(`call ${JSON.stringify(call.call.id)} (${JSON.stringify(call.call.name)}) reached the ${use.tool} tool although ${why(call)}`, "approval bypassed");
    if (traced.has(call.index)) violation(`call ${JSON.stringify(call.call.id)} left its trace in the workspace although ${why(call)}`, "approval bypassed");
  }
}

/**
 * The protocol every finished run keeps: after the prompt, each assistant message is followed by
 * exactly one tool message per call it made, with that call's id and name, in the order of the calls.
 */
export function requireTranscript(messages: readonly Message[]): void {
  if (messages[0]?.role !== "user") violation(`the transcript does not start with the prompt: ${shown(messages[0])}`, "hardening broken");
  let at = 1;
  while (at < messages.length) {
    const assistant = messages[at];
    if (assistant?.role !== "assistant") violation(`message ${at} should be the model's turn, is ${shown(assistant)}`, "hardening broken");
    at++;
    for (const call of assistant.toolCalls) {
      const answer = messages[at];
      if (answer?.role !== "tool" || answer.toolCallId !== call.id || answer.name !== call.name)
        violation(`call ${JSON.stringify(call.id)} (${JSON.stringify(call.name)}) should get its tool message at ${at}, found ${shown(answer)}`, "hardening broken");
      at++;
    }
  }
}

/** The tool message of the call with this id, when the transcript has exactly one. */
export function toolMessageOf(messages: readonly Message[], id: string): Extract<Message, { role: "tool" }> | undefined {
  const found = messages.filter((message): message is Extract<Message, { role: "tool" }> => message.role === "tool" && message.toolCallId === id);
  return found.length === 1 ? found[0] : undefined;
}

const shown = (message: Message | undefined) => (message === undefined ? "nothing" : JSON.stringify(message).slice(0, 200));

export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** How a run ended; a violation when it is still pending `AFTER_ABORT_PATIENCE_MS` after `signal` aborted. */
export function settleAfterAbort<T>(running: Promise<T>, signal: AbortSignal): Promise<Settled<T>> {
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  let start = () => undefined as void;
  const hung = new Promise<never>((_resolve, reject) => {
    start = () => {
      if (done) return;
      const message = `the loop had not ended ${AFTER_ABORT_PATIENCE_MS} ms after its signal aborted (it still waits for a hook or a call)`;
      timer = setTimeout(() => reject(new Violation(message, "unavailable")), AFTER_ABORT_PATIENCE_MS);
    };
  });
  if (signal.aborted) start();
  else signal.addEventListener("abort", start);
  const settled = running.then(
    (value): Settled<T> => ({ ok: true, value }),
    (error: unknown): Settled<T> => ({ ok: false, error }),
  );
  return Promise.race([settled, hung]).finally(() => {
    done = true;
    clearTimeout(timer);
    signal.removeEventListener("abort", start);
  });
}
