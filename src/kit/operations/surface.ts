/**
 * A target's surface: every tool it offers on a root, each with the operation it plays (or why it
 * plays none), and the record of which tools each case of the audit called.
 *
 * Promises: `moduleSurface` classifies every tool a module's `createWorkspaceTools` returned
 * (classify.ts) and calls one with the operation's input under the tool's own argument names; a tool
 * the user excluded is listed as excluded and never called. `recordingCalls` runs a case with a
 * record of its own: every call of a tool, through a surface or through the tools a target returns
 * (`recorded`), is counted by the tool's name in the record of the case under way, and so is each
 * optional argument a call sent (`recordOption`), so coverage counts what the audit did, never what
 * it meant to do. A case run with a deadline (`--max-time`'s, audit/command/budget.ts) or with a limit
 * on the target's time (a slow target's: once the case's calls have kept it busy that long) makes no
 * call past it: the call is refused with `PastDeadline`, and the property counts what it leaves unjudged
 * (`leaveUnjudged`), and how long the case waited on the target's answers (`awaitingTarget`: the
 * target's own time, which says whether it is too slow for a budget). `transcribing` runs a case with a transcript of its own: every tool call
 * (`recorded`, or over MCP the server's tool), every call of a module's export that wraps it
 * (`transcribe`) and the sandboxes the case worked in, in the order they were made, with the
 * arguments as they were passed, so that a counterexample shows what was done, not what was meant;
 * the calls `untranscribed` makes are counted only (the same calls asked again); a transcript with a
 * `limit` refuses every call past it as past a deadline, so that a case makes only its first calls.
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
  // A tool whose plan cannot place the attacked path is offered but never called (coverage says why).
  const playing = tools.filter((tool): tool is OperationTool => tool.classification.kind === "operation" && tool.classification.plan.unplaced === undefined && "call" in tool);
  return { offered: tools.map(({ name, classification }) => ({ name, classification })), of: (operation) => playing.filter((tool) => tool.classification.operation === operation) };
}

/** The tools of a module, classified by `spec.name` and input schema; `excluded` names those never to call, with why; `root` is what a `file://` URI of a relative path is below. */
export function moduleSurface(tools: readonly Tool[], excluded: ReadonlyMap<string, string> = new Map(), root?: string): Surface {
  return surface(
    tools.map((tool) => {
      const why = excluded.get(tool.spec.name);
      const classification: Classification = why === undefined ? classifyTool(tool.spec) : { kind: "excluded", why };
      if (classification.kind !== "operation") return { name: tool.spec.name, classification };
      return { name: tool.spec.name, classification, call: (input, signal) => tool.execute(argumentsFor(classification.plan, input, (path) => path, root), signal) };
    }),
  );
}

/** Calls per tool name, in one case or added up over a property. */
export type CallCount = Map<string, number>;

/** Per tool name, the calls that sent each of its optional arguments. */
export type OptionCount = Map<string, CallCount>;

/** One call a case made, with what it was passed. */
export interface SentCall {
  /** A tool the target's `createWorkspaceTools` returned, an MCP server's tool, or an export of the module (`createWorkspaceTools` itself, `workspacePath`). */
  via: "tool" | "mcp" | "export";
  name: string;
  /** The arguments as passed: a tool's one input, an export's arguments. */
  args: readonly unknown[];
}

/** What one run of a case made, in order, and the sandboxes it made it in (which a report writes `$BOX`). */
export interface Transcript {
  sent: SentCall[];
  sandboxes: string[];
  /**
   * The most calls the run may make: a further call is refused as past a deadline (`PastDeadline`),
   * so the case does only its first calls (a prefix, runner/pin.ts).
   */
  limit?: number;
}

const currentTranscript = new AsyncLocalStorage<Transcript | undefined>();

/** Runs `body` with every call it makes written into `transcript`. */
export function transcribing<R>(transcript: Transcript, body: () => Promise<R>): Promise<R> {
  return currentTranscript.run(transcript, body);
}

/** Runs `body` with its calls counted but left out of the transcript: calls made before, asked again. */
export function untranscribed<R>(body: () => R): R {
  return currentTranscript.run(undefined, body);
}

/** Writes a call into the transcript of the case under way (none outside a case); refuses it past the transcript's `limit`. */
export function transcribe(call: SentCall): void {
  const transcript = currentTranscript.getStore();
  if (transcript?.limit !== undefined && transcript.sent.length >= transcript.limit) throw new PastDeadline();
  transcript?.sent.push(call);
}

/** How many calls the transcript of the case under way holds (none outside a case). */
export function transcribedSoFar(): number | undefined {
  return currentTranscript.getStore()?.sent.length;
}

/** Notes the directory of a sandbox the case under way works in. */
export function transcribeSandbox(path: string): void {
  const transcript = currentTranscript.getStore();
  if (transcript !== undefined && !transcript.sandboxes.includes(path)) transcript.sandboxes.push(path);
}

interface CaseRecord {
  calls: CallCount;
  options: OptionCount;
  /** The cases this one left unjudged at its deadline (`leaveUnjudged`). */
  unjudged: number;
  /** The cases this one folded onto an earlier one of its own: they would have made the same call (`foldCases`). */
  folded: number;
  /** How long some call of the case waited on the target's answer (`awaitingTarget`): the target's own time, not the audit's. */
  busyMs: number;
}

/** When a case may make no further call: past `at` (`performance.now()` time), or once its calls have kept the target busy `busyMs`. */
export interface CaseDeadline {
  at?: number;
  busyMs?: number;
}

const currentCase = new AsyncLocalStorage<CaseRecord & { deadline: CaseDeadline; inFlight: number; busySince: number }>();

/** How long the case's calls have kept the target busy so far, a call still in flight counted until now. */
const busySoFar = (record: { busyMs: number; inFlight: number; busySince: number }): number => record.busyMs + (record.inFlight > 0 ? performance.now() - record.busySince : 0);

/** A call refused because its case is past its deadline: the case's property leaves the rest unjudged. */
export class PastDeadline extends Error {
  constructor() {
    super("the case is past its deadline: the target is too slow for this budget");
  }
}

/**
 * Runs one case with a fresh record, and answers the case's answer with the calls it made, the
 * optional arguments they sent and the cases it left unjudged; past its `deadline`, it makes no further call.
 */
export async function recordingCalls<R>(body: () => Promise<R>, deadline: CaseDeadline = {}): Promise<CaseRecord & { answer: R }> {
  const record = { calls: new Map(), options: new Map(), unjudged: 0, folded: 0, busyMs: 0, deadline, inFlight: 0, busySince: 0 };
  const answer = await currentCase.run(record, body);
  // A call still unanswered when its case ended (a hang, a cut) kept the target busy until then.
  return { calls: record.calls, options: record.options, unjudged: record.unjudged, folded: record.folded, busyMs: busySoFar(record), answer };
}

/**
 * The target's answer to a call of the case under way, timed: the time during which at least one of
 * the case's calls waits on an answer adds to its `busyMs`, so calls in flight together count once.
 */
export function awaitingTarget<R>(answer: Promise<R>): Promise<R> {
  const record = currentCase.getStore();
  if (record === undefined) return answer;
  if (record.inFlight++ === 0) record.busySince = performance.now();
  return answer.finally(() => {
    if (--record.inFlight === 0) record.busyMs += performance.now() - record.busySince;
  });
}

/** How long a watched call has spent waiting for the target to start what serves it (`startingServer`). */
export interface StartClock {
  /** When the start under way began (`performance.now()`), if one is. */
  startingSince: number | undefined;
  /** The starts' time so far. */
  startedMs: number;
}

const currentCall = new AsyncLocalStorage<StartClock>();

/** Runs `call` with `clock` counting the time it waits on starts (`startingServer`): a watch's bound (audit/runner/watch.ts) leaves that time out. */
export function clockingStarts<R>(clock: StartClock, call: () => Promise<R>): Promise<R> {
  return currentCall.run(clock, call);
}

/**
 * A call's wait for the target to start what serves it (an MCP server for the call's root): the
 * target setting itself up, bounded by its own start timeout, never the call's slowness. A loaded
 * machine starts a server in seconds, and a call bound counted from before the start took it for
 * a hang.
 */
export async function startingServer<R>(starting: Promise<R>): Promise<R> {
  const clock = currentCall.getStore();
  if (clock === undefined || clock.startingSince !== undefined) return starting;
  clock.startingSince = performance.now();
  try {
    return await starting;
  } finally {
    clock.startedMs += performance.now() - clock.startingSince;
    clock.startingSince = undefined;
  }
}

/** Whether the case under way is past its deadline. */
export function pastDeadline(): boolean {
  const record = currentCase.getStore();
  if (record === undefined) return false;
  const { at, busyMs } = record.deadline;
  return (at !== undefined && performance.now() > at) || (busyMs !== undefined && busySoFar(record) >= busyMs);
}

/** Counts `cases` of the case under way as folded onto others: judged by them, not cases of their own. */
export function foldCases(cases: number): void {
  const record = currentCase.getStore();
  if (record !== undefined) record.folded += cases;
}

/** Counts `cases` of the case under way as left unjudged at its deadline. */
export function leaveUnjudged(cases: number): void {
  const record = currentCase.getStore();
  if (record !== undefined) record.unjudged += cases;
}

/** Counts a call of `name` in the record of the case under way (none outside a case); throws `PastDeadline` past the case's deadline. */
export function recordCall(name: string): void {
  if (pastDeadline()) throw new PastDeadline();
  const calls = currentCase.getStore()?.calls;
  calls?.set(name, (calls.get(name) ?? 0) + 1);
}

/** Counts a call of `tool` that sent its optional argument `argument`, in the record of the case under way. */
export function recordOption(tool: string, argument: string): void {
  const options = currentCase.getStore()?.options;
  if (options === undefined) return;
  const sent = options.get(tool) ?? new Map<string, number>();
  sent.set(argument, (sent.get(argument) ?? 0) + 1);
  options.set(tool, sent);
}

/** The same tool, counting each call in the case's record (and refusing it past the case's deadline) and writing it into its transcript. */
export function recorded(tool: Tool): Tool {
  return {
    spec: tool.spec,
    async execute(input, signal) {
      recordCall(tool.spec.name);
      transcribe({ via: "tool", name: tool.spec.name, args: [input] });
      return awaitingTarget(Promise.resolve(tool.execute(input, signal)));
    },
  };
}

/** Adds `more` into `into`. */
export function addCalls(into: CallCount, more: ReadonlyMap<string, number>): void {
  for (const [name, count] of more) into.set(name, (into.get(name) ?? 0) + count);
}

/** Adds `more` into `into`, tool by tool. */
export function addOptions(into: OptionCount, more: ReadonlyMap<string, ReadonlyMap<string, number>>): void {
  for (const [tool, sent] of more) {
    const counted = into.get(tool) ?? new Map<string, number>();
    addCalls(counted, sent);
    into.set(tool, counted);
  }
}

/** An option count as JSON writes it: `{ tool: { argument: calls } }`. */
export function optionsRecord(options: OptionCount): Record<string, Record<string, number>> {
  return Object.fromEntries([...options].map(([tool, sent]) => [tool, Object.fromEntries(sent)]));
}

/** The option count a JSON record holds. */
export function optionsFrom(record: Readonly<Record<string, Readonly<Record<string, number>>>>): OptionCount {
  return new Map(Object.entries(record).map(([tool, sent]) => [tool, new Map(Object.entries(sent))]));
}
