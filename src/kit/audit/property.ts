/**
 * The shape of one audit property, and the helpers every property shares.
 *
 * Promises: a property states one rule about one gate (`title`), names the exports it needs, generates
 * its inputs with an arbitrary and throws `Violation` with a sentence a reader can act on when the
 * rule breaks. `kind: "limit"` marks a rule the chapter's design cannot keep (a known limit): the
 * reference is expected to fail it, and a fork that passes it has closed that limit.
 * Every property works in its own sandbox, removed afterwards, so properties can run in parallel.
 */
import type fc from "fast-check";
import { type Sandbox, createSandbox } from "../sandbox/sandbox.js";
import type { AuditTarget, ContractExport } from "./target.js";
import type { Tool } from "../../gates/tool.js";

export type Gate = "stringField" | "workspacePath" | "isInside" | "truncation" | "bash limits";

export interface AuditProperty<T = unknown> {
  id: string;
  gate: Gate;
  kind: "guarantee" | "limit";
  title: string;
  needs: readonly ContractExport[];
  /** Share of the audit's `--runs` this property takes (a run of sequences costs many tool calls). */
  budgetScale?: number;
  /** A table replayed whole in one run: it runs once, whatever the budget, and answers the same every time. */
  deterministic?: true;
  arbitrary: fc.Arbitrary<T>;
  check(target: AuditTarget, value: T): Promise<void>;
  /** The counterexample as a reader wants it: the tree, the candidate, the call. */
  render(value: T): string;
}

/** A broken rule, as opposed to a crash of the property itself. */
export class Violation extends Error {}

export function violation(message: string): never {
  throw new Violation(message);
}

// Sandboxes whose reset proved them as new, kept for the next run: creating one costs some thirty
// filesystem calls, about as much as a whole run of most properties.
const idleSandboxes: Sandbox[] = [];

/**
 * Runs `body` in a sandbox as new (fresh, or reset), then requires the canaries beside the workspace
 * to be untouched. A sandbox that cannot be reset is disposed.
 */
export async function inSandbox<R>(body: (box: Sandbox) => Promise<R>): Promise<R> {
  const box = idleSandboxes.pop() ?? (await createSandbox("workspace-gates-audit-"));
  try {
    const answer = await body(box);
    const changes = await box.canaryChanges();
    if (changes.length > 0) violation(`something outside the workspace changed:\n  ${changes.join("\n  ")}`);
    return answer;
  } finally {
    if (await box.reset()) idleSandboxes.push(box);
    else await box.dispose();
  }
}

/** Removes the sandboxes kept for reuse; the runner calls it when a property is done. */
export async function disposeIdleSandboxes(): Promise<void> {
  await Promise.all(idleSandboxes.splice(0).map((box) => box.dispose()));
}

export interface NamedTools {
  read: Tool;
  write: Tool;
  bash: Tool;
}

/** The tools by name, whatever order a fork returns them in. */
export function toolsOf(target: AuditTarget, root: string, options?: object): NamedTools {
  if (target.createWorkspaceTools === undefined) throw new Error("target has no createWorkspaceTools");
  const tools = target.createWorkspaceTools(root, options);
  const byName = (name: string) => {
    const tool = tools.find((candidate) => candidate.spec.name === name);
    if (tool === undefined) violation(`createWorkspaceTools returned no ${name} tool`);
    return tool;
  };
  return { read: byName("read"), write: byName("write"), bash: byName("bash") };
}

/** Calls a tool as the agent loop would; a rejected promise is itself a violation of the contract. */
export async function execute(tool: Tool, input: unknown, signal?: AbortSignal) {
  try {
    return await tool.execute(input, signal);
  } catch (error) {
    return violation(`${tool.spec.name}.execute threw instead of answering isError: ${String(error)}`);
  }
}

/** The trivially correct containment test on canonical paths. */
export function isUnder(root: string, real: string): boolean {
  return real === root || real.startsWith(`${root}/`);
}

export async function settle<T>(promise: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    return { ok: false, error };
  }
}
