/**
 * The shape of one audit property, and the helpers every property shares.
 *
 * Promises: a property states one rule about one gate (`title`), names the exports it needs, generates
 * its inputs with an arbitrary and throws `Violation` with a sentence a reader can act on when the
 * rule breaks. Its kind says what a failure means:
 * - `guarantee`: a safety rule judged on behaviour (refused with isError, nothing outside read or
 *   changed, the same answer for the same input); a failure fails the audit.
 * - `limit`: a rule the chapter's design cannot keep (a known limit): the reference is expected to
 *   fail it, and a fork that passes it has closed that limit.
 * - `conformance`: the chapter's exact texts (docs/contract.md); a fork with its own wording fails it
 *   and stays safe, so it fails the audit only when asked (`--conformance`).
 * A property that cannot judge this target (`notApplicable` answers why) is reported as such, apart
 * from one skipped for a missing export.
 * Every run works in a sandbox of its own: a fresh one, or one whose reset proved it as new (also
 * across properties, when the runner keeps them), so runs can go in parallel.
 * Does not promise: two audits at once in one process (the sandboxes are the process's: the one that
 * ends removes those the other is making); the CLI runs one, and shards are processes of their own.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { dirname } from "node:path";
import type fc from "fast-check";
import { type Sandbox, auditTempDir, createSandbox } from "../../sandbox/sandbox.js";
import { removeTree } from "../../sandbox/remove.js";
import { AuditFault, recordAuditFault } from "../../sandbox/fault.js";
import { type AuditTarget, type ContractExport, TargetStopped } from "../../operations/target.js";
import { PastDeadline } from "../../operations/surface.js";
import { ORACLES, type OracleId } from "../../operations/catalog.js";
import type { Consequence, Cwe, Threat } from "../../findings/findings.js";
import type { BrokenAt, Scene } from "./counterexample.js";
import { transcribeSandbox, transcribedSoFar } from "../../operations/surface.js";
import type { Tool, ToolResult } from "../../../gates/tool.js";

export type Gate = "stringField" | "workspacePath" | "isInside" | "truncation" | "bash limits" | "approval" | "agent loop" | "coverage";

export type PropertyKind = "guarantee" | "limit" | "conformance";

export interface AuditProperty<T = unknown> {
  id: string;
  gate: Gate;
  kind: PropertyKind;
  title: string;
  needs: readonly ContractExport[];
  /** What a failure costs, where the broken rule does not say (an oracle, or the violation itself). */
  consequence: Consequence;
  /** What an attacker needs for the case `value` (most properties: the same for every case). */
  threat(value: T): Threat;
  /**
   * The case with less of what an attacker must plant in the workspace (its tree's links, its special
   * files), the most taken away first. A tree keeps what shrinking could not take away: the runner
   * judges these cases in turn after a failure, and the threat is that of the first that fails too.
   */
  lesserCases?(value: T): T[];
  /** Weaknesses of its own, beyond its consequence's and its threat's (CWE-158 for a NUL byte). */
  weaknesses?: readonly Cwe[];
  /** Why this property cannot judge `target` (platform, options it lacks), or undefined when it can. */
  notApplicable?(target: AuditTarget): string | undefined;
  /** Share of the audit's `--runs` this property takes (a run of sequences costs many tool calls). */
  budgetScale?: number;
  /**
   * The most runs this property takes whatever the budget: 1 for a case that costs seconds of waiting,
   * or for a table replayed whole in one run that answers the same every time.
   */
  maxRuns?: number;
  /** How long one run waits on purpose (the bash timeout it outlives), which no target's slowness explains. */
  waitsMs?: number;
  arbitrary: fc.Arbitrary<T>;
  /** The cases for `target`, where they depend on what the user said of it (its protected paths); `arbitrary` otherwise. */
  arbitraryFor?(target: AuditTarget): fc.Arbitrary<T>;
  /** How many cases one value holds, when more than one: each probe aimed at a laid-out tree is one. */
  casesIn?(value: T): number;
  check(target: AuditTarget, value: T): Promise<void>;
  /**
   * The counterexample as a reader wants it: the workspace it lays out and what else it sets up, its
   * calls taken from what the case did (counterexample.ts); or, for a case that is no list of calls
   * (an agent's turns, a table), a text.
   */
  render(value: T): Scene | string;
}

/** A broken rule, as opposed to a crash of the property itself: what it costs, where the rule says, and at which call. */
export class Violation extends Error {
  constructor(
    message: string,
    readonly consequence?: Consequence,
    /** The call it broke at (its index among the case's calls), after them all, or else the last call made. */
    readonly brokenAt?: BrokenAt,
    /** How many calls the case had made when the rule broke (surface.ts, `transcribedSoFar`). */
    readonly made = transcribedSoFar(),
  ) {
    super(message);
  }
}

/**
 * Breaks the rule `message` states, at call `at` of the case when it says. Its consequence is the
 * oracle's of the catalogue, or the one named, or else the property's own.
 */
export function violation(message: string, breach?: OracleId | Consequence, at?: BrokenAt): never {
  throw new Violation(message, breach === undefined ? undefined : breach in ORACLES ? ORACLES[breach as OracleId].consequence : (breach as Consequence), at);
}

/**
 * A call that did not answer within its bound: its case is not shrunk (every smaller case would wait
 * as long), and its sandbox is not reused (the call may still act in it).
 */
export class Hang extends Violation {}

/**
 * The departures from the chapter's conventions one case meets, settled once the rest of the case was
 * judged (outside its sandbox, after the canaries): a departure must not end a case before a graver
 * rule, or the canaries, had their say.
 */
export class Departures {
  #first: string | undefined;

  /** Notes a departure; the first one noted is the one reported. */
  note(box: Sandbox, message: string): void {
    this.#first ??= portable(box, message);
  }

  /** Breaks the rule of the first departure noted, if any, as `convention differs`. */
  settle(): void {
    if (this.#first !== undefined) violation(this.#first, "convention differs");
  }
}

// How many times disposeSandboxes has run: a case whose sandbox was made across one is abandoned.
let disposals = 0;
// Sandboxes whose reset proved them as new, kept for the next run, by root name: creating one costs
// some forty filesystem calls, about as much as a whole run of most properties.
const idleSandboxes = new Map<string, Sandbox[]>();
// Sandboxes a case is using now; one still here when its property is done belongs to a case that hung.
const busySandboxes = new Set<Sandbox>();
let closed = false;
// Sandboxes disposeSandboxes has taken away: a late case must neither reuse nor pool them.
const removed = new WeakSet<Sandbox>();
// Sandboxes that went back to the pool at least once: proved reusable, so worth preparing for.
const pooledOnce = new WeakSet<Sandbox>();

/** What the canaries showed after the bodies run inside `seeingOutside` (each sandbox's, `$BOX` for its path). */
interface OutsideSeen {
  changes: string[];
}

const seeing = new AsyncLocalStorage<OutsideSeen>();

/**
 * Runs `body` (a case), and answers what changed outside the workspace in its sandboxes, however the
 * case ended: how the runner tells whether the first calls of a case already changed the outside (pin.ts).
 */
export async function seeingOutside(body: () => Promise<unknown>): Promise<string[]> {
  const seen: OutsideSeen = { changes: [] };
  await seeing.run(seen, () => body().catch(() => undefined));
  return seen.changes;
}

/**
 * Runs `body` in a sandbox as new (fresh, or reset) whose root is named `rootName` (default `ws`),
 * then requires the canaries beside the workspace to be untouched. A sandbox that cannot be reset is
 * disposed; one that goes back to the pool for the first time is handed to `onPooled`. Under
 * `seeingOutside`, the canaries are compared however the body ended, and what changed is noted there.
 */
export async function inSandbox<R>(body: (box: Sandbox) => Promise<R>, { rootName = "ws", onPooled }: { rootName?: string; onPooled?: (box: Sandbox) => void } = {}): Promise<R> {
  if (closed) throw new Error(STOPPED);
  const idle = idleSandboxes.get(rootName) ?? [];
  idleSandboxes.set(rootName, idle);
  const disposalsBefore = disposals;
  const box = idle.pop() ?? (await newSandbox(rootName));
  // Sandboxes were disposed while this one was being made: its case outlived its property (it hung).
  if (closed || disposals !== disposalsBefore) {
    await disposePooled(box);
    throw new Error(STOPPED);
  }
  transcribeSandbox(dirname(box.outside));
  let finished = () => {};
  const running = new Promise<void>((resolve) => (finished = resolve));
  runningCases.add(running);
  busySandboxes.add(box);
  let canariesChecked = false;
  let spoiled = false;
  const seen = seeing.getStore();
  try {
    const answer = await (seen === undefined ? body(box) : body(box).finally(async () => seen.changes.push(...(await box.canaryChanges()).map((change) => portable(box, change)))));
    const changes = await box.canaryChanges();
    if (changes.length > 0) violation(`something outside the workspace changed:\n  ${changes.join("\n  ")}`, "outsideChanged", "no single call");
    canariesChecked = true;
    return answer;
  } catch (error) {
    // The reason names paths as the counterexample does, so a report holds no temp path of this run.
    if (error instanceof Hang) {
      spoiled = true;
      throw new Hang(portable(box, error.message), error.consequence, error.brokenAt, error.made);
    }
    if (error instanceof Violation) throw new Violation(portable(box, error.message), error.consequence, error.brokenAt, error.made);
    if (error instanceof TargetStopped) throw new TargetStopped(portable(box, error.message), error.how);
    throw error;
  } finally {
    busySandboxes.delete(box);
    // A case that outlived its property (a hang) may find its sandbox removed under it, even while
    // it resets it: such a sandbox must not go back to the pool.
    if (!closed && !spoiled && !removed.has(box) && (await box.reset({ canariesChecked })) && !removed.has(box)) {
      idle.push(box);
      if (!pooledOnce.has(box)) {
        pooledOnce.add(box);
        onPooled?.(box);
      }
    } else if (!removed.has(box)) await disposePooled(box);
    runningCases.delete(running);
    finished();
  }
}

/** A text with the sandbox's own path written `$BOX`, as counterexamples name it on every machine. */
export function portable(box: Sandbox, text: string): string {
  return text.replaceAll(dirname(box.outside), "$BOX");
}

const STOPPED = "the audit has stopped: no new sandbox";
// Cases under way, each settled once its sandbox is put back or removed.
const runningCases = new Set<Promise<void>>();
/** How long a stopping audit lets the cases under way end and remove their own sandboxes. */
const CLOSE_GRACE_MS = 2_000;

/**
 * Removes every sandbox: those kept for reuse (unless `keepIdle`) and those a hung case still holds
 * (its call may answer later; it then finds its sandbox gone). The runner calls it when a property is
 * done; the audit keeps the idle ones from property to property (a reset proves them as new, as it
 * does between cases) and removes them at its end.
 */
export async function disposeSandboxes({ keepIdle = false }: { keepIdle?: boolean } = {}): Promise<void> {
  disposals += 1;
  // One still being made belongs to a case that hung (its property is done): it goes too, or it
  // would land after the audit's last disposal and stay in the temp folder.
  const late = (await Promise.allSettled([...pendingSandboxes])).flatMap((made) => (made.status === "fulfilled" ? [made.value] : []));
  const all = [...late, ...(keepIdle ? [] : [...idleSandboxes.values()].flatMap((idle) => idle.splice(0))), ...busySandboxes];
  for (const box of all) removed.add(box);
  busySandboxes.clear();
  await Promise.all(all.map(disposePooled));
}

/**
 * Makes a sandbox for each root name that has none idle, puts it in the pool and hands it to
 * `onPooled`: what a target needs on those roots (an MCP server per spelling) can start at once.
 */
export async function poolSandboxes(rootNames: readonly string[], onPooled: (box: Sandbox) => void): Promise<void> {
  for (const rootName of rootNames) {
    const idle = idleSandboxes.get(rootName) ?? [];
    idleSandboxes.set(rootName, idle);
    if (idle.length > 0) continue;
    const box = await newSandbox(rootName);
    idle.push(box);
    pooledOnce.add(box);
    onPooled(box);
  }
}

/** Sandboxes being made now: one may land after the audit has stopped, and must go too. */
const pendingSandboxes = new Set<Promise<Sandbox>>();

async function newSandbox(rootName: string): Promise<Sandbox> {
  const creation = createSandbox("workspace-gates-audit-", { rootName, parent: auditTempDir() });
  pendingSandboxes.add(creation);
  try {
    return await creation;
  } finally {
    pendingSandboxes.delete(creation);
  }
}

/**
 * Removes a sandbox of the pool. A server not yet ended may still write there (its TMPDIR is in the
 * sandbox): the sweep removes it again once the servers have ended, and only a failure then is the
 * audit's own.
 */
async function disposePooled(box: Sandbox): Promise<void> {
  disposedSandboxes.add(box.base);
  await box.dispose({ recordFault: false });
}

/**
 * The directory of every sandbox disposed since the last sweep. A process that outlives its sandbox
 * (a server ended after it) can bring the directory back: tsx makes its cache again, parents and all,
 * under the TMPDIR the sandbox gave the server.
 */
const disposedSandboxes = new Set<string>();

/**
 * Removes again every sandbox disposed since the last sweep. Call it once the target's processes
 * have ended (mcp/target.ts `dispose`): a directory it cannot remove then is recorded as the audit's
 * own fault, where one a disposal could not remove while a server still wrote in it was not.
 */
export function sweepSandboxes(): void {
  for (const base of disposedSandboxes) {
    disposedSandboxes.delete(base);
    try {
      removeTree(base);
    } catch (error) {
      if (error instanceof AuditFault) recordAuditFault(error);
      else throw error;
    }
  }
}

/**
 * Removes every sandbox, including one being made, and refuses new ones: the audit is stopping
 * (Ctrl-C) while a case may still run.
 */
export async function closeSandboxes(): Promise<void> {
  closed = true;
  // A case under way still writes into its sandbox (a recursive mkdir would bring back a removed
  // one): let it end and remove its own; what has not ended by then hangs, and is removed here.
  let grace: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(runningCases), new Promise((resolve) => (grace = setTimeout(resolve, CLOSE_GRACE_MS)))]);
  clearTimeout(grace);
  const late = await Promise.allSettled([...pendingSandboxes]);
  await Promise.all(late.map((creation) => (creation.status === "fulfilled" ? disposePooled(creation.value) : undefined)));
  await disposeSandboxes();
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
export function execute(tool: Tool, input: unknown, signal?: AbortSignal): Promise<ToolResult> {
  return answered(`${tool.spec.name}.execute`, tool.execute(input, signal));
}

/**
 * A tool's answer; a rejection is a violation of the contract, except a target that stopped answering
 * (`TargetStopped`) and a call cut at its case's deadline (`PastDeadline`), which the runner judges on
 * its own (run.ts).
 */
export async function answered(call: string, answer: Promise<ToolResult>): Promise<ToolResult> {
  try {
    return await answer;
  } catch (error) {
    if (error instanceof TargetStopped || error instanceof PastDeadline) throw error;
    return violation(`${call} threw instead of answering isError: ${String(error)}`);
  }
}

/**
 * Calls at most this many tools at once where a property's oracle lets calls overlap. A round of a
 * tree's probes ends with its slowest call, so fewer waves matter more than each call's latency (over
 * MCP, 16 judged read cases faster than 8 in trial runs; the bench measures 16 against the floor).
 */
export const CALLS_IN_FLIGHT = 16;

/**
 * `call` on every item, at most `limit` at once, answered in the items' order. Every call has settled
 * before it answers or throws (the first error), so none goes on in a sandbox that is being reset.
 */
export async function inFlight<T, R>(items: readonly T[], call: (item: T) => Promise<R>, limit = CALLS_IN_FLIGHT): Promise<R[]> {
  const settled: PromiseSettledResult<R>[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      try {
        settled[index] = { status: "fulfilled", value: await call(items[index] as T) };
      } catch (reason) {
        settled[index] = { status: "rejected", reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  const failed = settled.find((result) => result.status === "rejected");
  if (failed !== undefined) throw failed.reason;
  return settled.map((result) => (result as PromiseFulfilledResult<R>).value);
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
