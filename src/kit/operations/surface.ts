/**
 * A target's surface: every tool it offers on a root, each with the operation it plays (or why it
 * plays none), and the record of which tools each case of the audit called.
 *
 * Promises: `moduleSurface` classifies every tool a module's `createWorkspaceTools` returned
 * (classify.ts) and calls one with the operation's input under the tool's own argument names; a tool
 * the user excluded is listed as excluded and never called. `recordingCalls` runs a case with a
 * record of its own: every call of a tool, through a surface or through the tools a target returns
 * (`recorded`), is counted by the tool's name in the record of the case under way, so coverage counts
 * what the audit did, never what it meant to do.
 * Does not promise: that a tool answers its operation's input sensibly; the oracles judge that.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Tool, ToolResult } from "../../gates/tool.js";
import type { OperationId, OperationInput } from "./catalog.js";
import { type Classification, argumentsFor, classifyTool } from "./classify.js";

/** A tool as a report lists it: its own name and what the kit made of it. */
export interface OfferedTool {
  name: string;
  classification: Classification;
}

/** A tool of a surface that plays an operation, ready to be called with that operation's input. */
export interface OperationTool extends OfferedTool {
  classification: Extract<Classification, { kind: "operation" }>;
  call(input: OperationInput, signal?: AbortSignal): Promise<ToolResult>;
}

export interface Surface {
  /** Every tool offered, in the target's order. */
  readonly offered: readonly OfferedTool[];
  /** The tools that play `operation`, in the target's order. */
  of(operation: OperationId): readonly OperationTool[];
}

export function surface(tools: readonly (OfferedTool | OperationTool)[]): Surface {
  const playing = tools.filter((tool): tool is OperationTool => tool.classification.kind === "operation" && "call" in tool);
  return { offered: tools.map(({ name, classification }) => ({ name, classification })), of: (operation) => playing.filter((tool) => tool.classification.operation === operation) };
}

/** The tools of a module, classified by `spec.name` and input schema; `excluded` names those never to call, with why. */
export function moduleSurface(tools: readonly Tool[], excluded: ReadonlyMap<string, string> = new Map()): Surface {
  return surface(
    tools.map((tool) => {
      const why = excluded.get(tool.spec.name);
      const classification: Classification = why === undefined ? classifyTool(tool.spec) : { kind: "excluded", why };
      if (classification.kind !== "operation") return { name: tool.spec.name, classification };
      return { name: tool.spec.name, classification, call: (input, signal) => tool.execute(argumentsFor(classification.plan, input, (path) => path), signal) };
    }),
  );
}

/** Calls per tool name, in one case or added up over a property. */
export type CallCount = Map<string, number>;

const currentCase = new AsyncLocalStorage<CallCount>();

/** Runs one case with a fresh record, and answers the case's answer with the calls it made. */
export async function recordingCalls<R>(body: () => Promise<R>): Promise<{ calls: CallCount; answer: R }> {
  const calls: CallCount = new Map();
  return { calls, answer: await currentCase.run(calls, body) };
}

/** Counts a call of `name` in the record of the case under way (none outside a case). */
export function recordCall(name: string): void {
  const calls = currentCase.getStore();
  calls?.set(name, (calls.get(name) ?? 0) + 1);
}

/** The same tool, counting each call in the case's record. */
export function recorded(tool: Tool): Tool {
  return {
    spec: tool.spec,
    execute(input, signal) {
      recordCall(tool.spec.name);
      return tool.execute(input, signal);
    },
  };
}

/** Adds `more` into `into`. */
export function addCalls(into: CallCount, more: ReadonlyMap<string, number>): void {
  for (const [name, count] of more) into.set(name, (into.get(name) ?? 0) + count);
}
