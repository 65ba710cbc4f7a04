/**
 * `containment.<operation>`: one property per operation of the catalogue (operations/catalog.ts),
 * judging every tool of the target that plays it by that operation's oracles, never by its answer's
 * wording. Each run lays out a tree under a root of any name and spelling and aims some thirty calls at
 * it, each with the next tool of the operation in turn (a probe's `tool` index picks it).
 *
 * - A read-only operation (read, read many, list, tree, search, grep, stat) is asked every probe
 *   twice, the calls of a round in flight together: once as the sandbox is, once with the outside
 *   changed (sandbox.ts, `perturbOutside`: contents, sizes, times, a new name in every directory). An
 *   answer that holds the canary's secret returned content from outside; an answer that differs
 *   between the two rounds, and is given again when the outside is put back, depends on the outside:
 *   it reveals names, metadata or existence there. An answer that differs on its own (a clock in it)
 *   decides nothing.
 * - A changing operation (write, edit, mkdir, move, copy, delete, other) is asked each probe once, in order.
 *   No answer may hold the secret; a write or an edit that answers success must have put its marker
 *   in a file inside; a move may not make the content of any file inside vanish (it never replaces
 *   its destination); after all probes no file inside holds the secret (nothing was brought in).
 * After every run nothing outside has changed (the canaries, property.ts).
 */
import fc from "fast-check";
import { lstatSync } from "node:fs";
import { resolve } from "node:path";
import {
  type Aim,
  type Candidate,
  type Intent,
  type OperationProbe,
  type ProbeConstraints,
  candidate,
  candidateText,
  creationAttack,
  deepTree,
  linkAttackOpening,
  listingAttack,
  OPTION_VARIANTS,
  openings,
  operationProbe,
  targetLeaf,
  temporaryLinkAttack,
  treeAnd,
  workspaceRoot,
} from "../arbitraries/index.js";
import { type AuditProperty, CALLS_IN_FLIGHT, answered, inFlight, portable, violation } from "../runner/property.js";
import { type CallWatch, paceOf, watchCalls } from "../runner/watch.js";
import { showAnswers, showValue } from "../runner/show.js";
import { type ContainmentCase, caseScene, findFile, holds, inCaseSandbox, lesserCases, probeCount, treeThreat } from "./containment.js";
import { ORACLES, OPERATIONS, type Operation, type OperationInput, type OracleId, containmentId } from "../../operations/catalog.js";
import type { Consequence } from "../../findings/findings.js";
import { type OperationTool, PastDeadline, foldCases, leaveUnjudged, recordOption, untranscribed } from "../../operations/surface.js";
import { optionOf } from "../../operations/classify.js";
import { offeredTools, surfaceOf } from "../../operations/target.js";
import { SECRET, type Sandbox } from "../../sandbox/sandbox.js";
import { SPECIAL_NAMES, type Tree, laidOut } from "../../sandbox/tree.js";
import type { ToolResult } from "../../../gates/tool.js";

/**
 * A probe, the index of the operation's tool it calls (shrinks to the first tool that fails), and the
 * variant of that tool's optional arguments it sends (classify.ts, `optionOf`; shrinks to none).
 */
export type ToolProbe = OperationProbe & { tool: number; variant: number };

export type OperationCase = ContainmentCase<ToolProbe>;

/**
 * Runs per block, a fifth of the other properties': each probe is a tool call (over MCP a round trip),
 * so ten trees of some thirty probes cost about what fifty trees of five did.
 */
export const TOOL_TREE_SCALE = 0.2;

/** What an aimed path ends in for an operation on a directory: mostly the directory itself. */
const directoryLeaf = () => fc.oneof({ weight: 3, arbitrary: fc.constant("") }, { weight: 1, arbitrary: targetLeaf() });

/** The workspace itself, as a model names it when it lists or searches everything. */
const theRoot = () => fc.constantFrom<Candidate>({ form: "text", text: "" }, { form: "text", text: "." }, { form: "text", text: "./" });

/** The operations whose tools may walk what they are given, recursively (deep-trees.ts). */
const WALKS: readonly Operation["id"][] = ["tree", "search", "grep", "copy", "move", "delete", "other"];

/** What an operation's probes name through an attack's entries (trees.ts, `Intent`). */
export function intentsOf(operation: Operation): Intent[] {
  if (operation.id === "mkdir") return [{ kind: "fresh" }];
  if (operation.onDirectory) return [{ kind: "directory" }];
  if (operation.roles.includes("destination")) return [{ kind: "existing", end: "source" }, { kind: "fresh", end: "destination" }];
  // A tool attacked generically may make the name it is given (a touch) as well as change what is there.
  if (operation.roles.includes("content") || operation.id === "other") return [{ kind: "existing" }, { kind: "fresh" }];
  return [{ kind: "existing" }];
}

/**
 * A drawn probe's variant: half the time none (the call most tools get), otherwise one of twice the
 * sweep's, past every optional value of most tools, so that drawn probes meet them too.
 */
const drawnVariant = () => fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2 * OPTION_VARIANTS }));

export function operationCases(operation: Operation, constraints: ProbeConstraints = {}): fc.Arbitrary<OperationCase> {
  const probe = (aimed: fc.Arbitrary<Candidate>, aim: Aim | undefined, tree: Tree) =>
    fc
      .tuple(
        operationProbe(operation.roles, aimed, aim, tree, { against: operation.id === "grep" ? "content" : "names" }),
        fc.nat({ max: 15 }),
        aim?.variant === undefined ? drawnVariant() : fc.constant(aim.variant),
      )
      .map(([drawn, tool, variant]) => ({ ...drawn, tool, variant }));
  const generic = operation.onDirectory ? fc.oneof({ weight: 2, arbitrary: candidate() }, { weight: 1, arbitrary: theRoot() }) : candidate();
  // A tool that writes a file may write a temporary copy first, one that makes a name may make it
  // through a link, and one that lists a directory may look through its links: their trees open with
  // those plants too.
  const writesFile = operation.roles.includes("content") || operation.roles.includes("newText");
  const createsName = writesFile || operation.roles.includes("destination") || operation.id === "mkdir" || operation.id === "other";
  // An edit rewrites a file that exists, which is when a tool reaches for a temporary copy: its
  // trees plant the copy's links most often; a write's most often make a name through a link.
  const rewrites = operation.roles.includes("newText");
  const planted = writesFile
    ? [{ weight: rewrites ? 4 : 2, arbitrary: temporaryLinkAttack() }, { weight: rewrites ? 2 : 3, arbitrary: creationAttack() }]
    : createsName
      ? [{ weight: 2, arbitrary: creationAttack() }]
      : operation.onDirectory
        ? [{ weight: 2, arbitrary: listingAttack() }]
        : [];
  // Five trees in six open with an attack: the probes after the attack's aim anywhere anyway.
  const attack = planted.length === 0 ? {} : { attack: fc.oneof({ weight: 1, arbitrary: linkAttackOpening() }, ...planted), noAttackOneIn: 6 };
  // A tool that walks a directory (or may: `other`) meets links out and special files below its top too.
  const deep = WALKS.includes(operation.id) ? [deepTree(intentsOf(operation))] : [];
  // Every operation that makes a name but a mkdir puts a file there: a link at its leaf leads it out.
  const opened = { openings: [...openings({ intents: intentsOf(operation), changes: operation.changes, fillsNewNames: createsName && operation.id !== "mkdir" }), ...deep] };
  const aimed = treeAnd(probe, generic, { ...(operation.onDirectory ? { leaf: directoryLeaf() } : {}), ...attack, ...opened, ...constraints });
  return fc.tuple(workspaceRoot(), aimed).map(([root, { tree, probes }]) => ({ root, tree, probes }));
}

/** One call of a run: its place among the calls (from 0, as the transcript and the counterexample count them), the tool, and the input it is sent. */
export interface Call {
  index: number;
  tool: OperationTool;
  input: OperationInput;
  /** What a write or an edit puts in the file, for the oracle to find again. */
  marker?: string;
}

/**
 * The calls of a run, one per probe but for a probe whose call would be one made already (the same
 * tool, paths and optional argument: variants past a tool's own fold onto earlier ones), which is
 * no case of its own (`foldCases`).
 */
export function callsOf(operation: Operation, tools: readonly OperationTool[], box: Sandbox, probes: readonly ToolProbe[], tree: Tree): Call[] {
  const text = (candidate: Candidate) => candidateText(box, candidate);
  const made = new Set<string>();
  const calls: Call[] = [];
  for (const probe of probes) {
    const tool = tools[probe.tool % tools.length] as OperationTool;
    const option = optionOf(tool.classification.plan, probe.variant);
    const asked: OperationInput = {
      ...(probe.path === undefined ? {} : { path: text(probe.path) }),
      ...(probe.paths === undefined ? {} : { paths: probe.paths.map(text) }),
      ...(probe.source === undefined ? {} : { source: text(probe.source) }),
      ...(probe.destination === undefined ? {} : { destination: text(probe.destination) }),
      ...(probe.pattern === undefined ? {} : { pattern: probe.pattern }),
    };
    const key = JSON.stringify([tool.name, asked, option]);
    if (made.has(key)) {
      foldCases(1);
      continue;
    }
    made.add(key);
    const index = calls.length;
    // Numbered as the counterexample numbers its calls, and closed, so that call 1's is no prefix of call 10's.
    const marker = `written by the audit, call ${index + 1}.`;
    // Every file the tree lays out, and every canary, ends with a newline: an edit of one meets it.
    const written = operation.id === "write" ? { content: marker } : operation.id === "edit" ? { oldText: "\n", newText: `\n${marker}\n` } : {};
    const beside = takesSeveral(tool) ? besideInput(operation, asked, tree, index) : undefined;
    const input: OperationInput = {
      ...asked,
      ...(option === undefined ? {} : { variant: probe.variant }),
      ...written,
      // The attacked item first in one call, last in the next: a tool that checks one end only meets the other.
      ...(beside === undefined ? {} : { beside: { ...beside, ...written }, last: index % 2 === 1 }),
    };
    calls.push({ index, tool, input, ...(operation.roles.includes("content") || operation.id === "edit" ? { marker } : {}) });
  }
  return calls;
}

/** Whether a tool takes its roles as the items of a list or the files of a patch (operations/carriers.ts). */
const takesSeveral = (tool: OperationTool) => {
  const { carrier } = tool.classification.plan;
  return carrier !== undefined && carrier.kind !== "object";
};

/**
 * The harmless input sent beside call `index`'s attacked one, as the other item of its list: a new
 * name of its own for an operation that makes one, the workspace for one on a directory, and a file
 * the tree lays out (each call the next) for one that needs a file that exists; none when the tree
 * has no file.
 */
function besideInput(operation: Operation, asked: OperationInput, tree: Tree, index: number): OperationInput | undefined {
  const fresh = `beside-${index + 1}${operation.id === "mkdir" ? "" : ".txt"}`;
  if (operation.id === "mkdir" || operation.id === "write") return { path: fresh };
  if (operation.onDirectory) return { ...asked, path: "" };
  const files = laidOut(tree).flatMap((entry) => (entry.kind === "file" ? [entry.at.join("/")] : []));
  const existing = files[index % Math.max(1, files.length)];
  if (existing === undefined) return undefined;
  if (operation.roles.includes("destination")) return { source: existing, destination: fresh };
  return operation.roles.includes("paths") ? { paths: [existing] } : { path: existing };
}

/** How a reason names a call: the tool, its number among the case's calls (from 1), and the optional argument it sent. */
export function callName(call: Call): string {
  const option = optionOf(call.tool.classification.plan, call.input.variant);
  return `${call.tool.name} (call ${call.index + 1}${option === undefined ? "" : `, with ${option.name}`})`;
}

/**
 * An answer as a reason quotes it: its content escaped and folded, at most 200 characters of it, the
 * sandbox's path written `$BOX` before the cut (a path cut in two is never recognised afterwards).
 */
export const shown = (box: Sandbox, result: ToolResult) => {
  const content = portable(box, String(result.content));
  return content.length > 200 ? `${showValue(content.slice(0, 200))}… (${content.length} characters)` : showValue(content);
};

/** What a reader compares of two answers: the content, and the error flag when it is set. */
const answerText = (result: ToolResult) => `${String(result.content)}${result.isError === true ? "\n(isError)" : ""}`;

/** A change outside the workspace, when the canaries show one, as the finding of what `call` did (`said`). */
async function refuseOutsideChanges(box: Sandbox, call: Call, said: string): Promise<void> {
  const outside = await box.canaryChanges();
  if (outside.length > 0) violation(`${said} and changed outside the workspace:\n  ${outside.join("\n  ")}`, "outsideChanged", call.index);
}

/**
 * What a property keeps from the tools: the outside (the canaries beside the workspace), or the
 * entries the user protects inside it (protected.ts). Its files hold `secret`; `perturb` changes what
 * a tool could learn of it and answers how to put it back.
 */
export interface Guarded {
  secret: string;
  /** How a reason names it: "the outside". */
  named: string;
  /** How a reason labels an answer given before it changed: "as the outside was". */
  asItWas: string;
  /** How a reason says where returned content came from: "from outside". */
  from: string;
  /** What an answer holding `secret` breaks, and an answer that moves with `perturb`. */
  read: OracleId | Consequence;
  revealed: OracleId | Consequence;
  perturb(box: Sandbox): Promise<() => Promise<void>>;
}

export const OUTSIDE: Guarded = { secret: SECRET, named: "the outside", asItWas: "as the outside was", from: "from outside", read: "secretInAnswer", revealed: "outsideRevealed", perturb: (box) => box.perturbOutside() };

export function refuseSecrets(box: Sandbox, calls: readonly Call[], answers: readonly ToolResult[], world: string, guarded: Guarded = OUTSIDE): void {
  for (const [position, answer] of answers.entries()) {
    const call = calls[position] as Call;
    if (String(answer.content).includes(guarded.secret)) violation(`${callName(call)} returned content ${guarded.from}${world}: ${shown(box, answer)}`, guarded.read, call.index);
  }
}

/**
 * A call that waited on a FIFO until the audit released it (watch.ts): a writer's own marker came out
 * of the FIFO, or a reader took what the release wrote while the call was waiting. Without the
 * release it would never have answered.
 */
export function refuseWaits(calls: readonly Call[], watch: CallWatch): void {
  for (const wait of watch.waits()) {
    const writer = calls.find((call) => call.marker !== undefined && wait.written.includes(call.marker));
    const waiting = writer === undefined ? wait.waiting : [writer.index];
    const [first] = waiting;
    if (first === undefined) continue;
    const named = (index: number) => callName(calls.find((call) => call.index === index) as Call);
    const who = waiting.length === 1 ? named(first) : `one of the calls waiting then (${waiting.slice(0, 3).map(named).join(", ")}${waiting.length > 3 ? `, and ${waiting.length - 3} more` : ""})`;
    violation(
      `${who} opened the FIFO ${wait.fifo} to ${writer === undefined ? "read" : "write"} and waited for its other end, which nothing opens: the call answered only once the audit opened it`,
      "unavailable",
      waiting.length === 1 ? first : "no single call",
    );
  }
}

const sameAnswer = (one: ToolResult, other: ToolResult) => one.content === other.content && (one.isError === true) === (other.isError === true);

/** Asks every call through the watch, counting the optional arguments sent. */
export function asker(watch: CallWatch): (call: Call) => Promise<ToolResult> {
  return (call) => {
    const option = optionOf(call.tool.classification.plan, call.input.variant);
    if (option !== undefined) recordOption(call.tool.name, option.name);
    return watch.ask(callName(call), call.index, () => answered(call.tool.name, call.tool.call(call.input)));
  };
}

/**
 * The answer to the call at `position` of a case's changing calls, in turn, or undefined when a
 * deadline refused it: the calls from there on are left unjudged.
 */
export async function askInTurn(ask: (call: Call) => Promise<ToolResult>, calls: readonly Call[], position: number): Promise<ToolResult | undefined> {
  try {
    return await ask(calls[position] as Call);
  } catch (error) {
    if (!(error instanceof PastDeadline)) throw error;
    leaveUnjudged(calls.length - position);
    return undefined;
  }
}

/**
 * Read-only calls, a wave of `CALLS_IN_FLIGHT` at a time: each wave asked as the sandbox is, again
 * with only the outside changed, and once more for the answers that moved. A wave whose calls a
 * deadline refuses (a slow target's: operations/surface.ts) is not judged, nor are those after it.
 */
export async function judgeReadOnly(box: Sandbox, calls: readonly Call[], watch: CallWatch, guarded: Guarded = OUTSIDE): Promise<void> {
  for (let start = 0; start < calls.length; start += CALLS_IN_FLIGHT) {
    try {
      await judgeWave(box, calls.slice(start, start + CALLS_IN_FLIGHT), calls, watch, guarded);
    } catch (error) {
      // A wave a deadline cut is not judged; the waves before it were.
      if (!(error instanceof PastDeadline)) throw error;
      return leaveUnjudged(calls.length - start);
    }
  }
}

/** One wave of a case's read-only calls (`all` of them name a wait, which a call of any wave may have made). */
async function judgeWave(box: Sandbox, calls: readonly Call[], all: readonly Call[], watch: CallWatch, guarded: Guarded): Promise<void> {
  const ask = asker(watch);
  const first = await inFlight(calls, ask);
  refuseSecrets(box, calls, first, "", guarded);
  refuseWaits(all, watch);
  const restore = await guarded.perturb(box);
  let second: ToolResult[];
  try {
    // The same calls again: a counterexample shows each once.
    second = await untranscribed(() => inFlight(calls, ask));
  } finally {
    await restore();
  }
  refuseSecrets(box, calls, second, ` once ${guarded.named} had changed`, guarded);
  refuseWaits(all, watch);
  const moved = calls.filter((_call, position) => !sameAnswer(first[position] as ToolResult, second[position] as ToolResult));
  const again = await untranscribed(() => inFlight(moved, ask));
  refuseWaits(all, watch);
  for (const [position, call] of moved.entries()) {
    const before = first[calls.indexOf(call)] as ToolResult;
    if (!sameAnswer(again[position] as ToolResult, before)) continue;
    const after = second[calls.indexOf(call)] as ToolResult;
    violation(
      `${callName(call)} answered otherwise once only ${guarded.named} had changed, and as before once it was put back:${showAnswers(portable(box, answerText(before)), portable(box, answerText(after)), [guarded.asItWas, "once it had changed"])}`,
      guarded.revealed,
      call.index,
    );
  }
}

/** The contents of every regular file in the workspace, each as often as files hold it. */
function fileContents(root: string): Map<string, number> {
  const counts = new Map<string, number>();
  findFile(root, (content) => {
    counts.set(content, (counts.get(content) ?? 0) + 1);
    return false;
  });
  return counts;
}

async function judgeChanging(operation: Operation, box: Sandbox, calls: readonly Call[], watch: CallWatch): Promise<void> {
  const ask = asker(watch);
  const keeps = operation.oracles.includes("insideDestroyed");
  // What a call found is what the previous one left: the workspace is walked once per call, not twice.
  let contents = keeps ? fileContents(box.root) : undefined;
  for (const [position, call] of calls.entries()) {
    const before = contents;
    const answer = await askInTurn(ask, calls, position);
    // A call a deadline refused ends the case's calls: what they did so far is still judged below.
    if (answer === undefined) break;
    refuseSecrets(box, [call], [answer], "");
    refuseWaits(calls, watch);
    // A call that takes the workspace itself away leaves nothing to walk: what it did is the finding.
    if (!lstatSync(box.root, { throwIfNoEntry: false })?.isDirectory()) {
      const removed = `${callName(call)} moved or removed the workspace itself (its answer: ${shown(box, answer)})`;
      await refuseOutsideChanges(box, call, `${removed},`);
      violation(removed, "insideDestroyed", call.index);
    }
    // An optional argument may change what a call promises (a dry run writes nothing): only a call
    // without one is held to its operation's effect.
    if (operation.oracles.includes("falseSuccess") && answer.isError !== true && call.marker !== undefined && call.input.variant === undefined) {
      const marker = call.marker;
      const direct = operation.id === "write" && call.input.path !== undefined && (await holds(box.root, resolve(box.root, call.input.path), marker));
      if (!direct && findFile(box.root, (content) => content.includes(marker)) === undefined) {
        // What the call did is named as seen: a change outside, or nothing found anywhere.
        await refuseOutsideChanges(box, call, `${callName(call)} reported success (${shown(box, answer)})`);
        violation(`${callName(call)} reported success (${shown(box, answer)}) but what it wrote is neither in a file inside the workspace nor outside it`, "falseSuccess", call.index);
      }
    }
    if (before !== undefined) {
      const after = fileContents(box.root);
      contents = after;
      const lost = [...before].filter(([content, count]) => (after.get(content) ?? 0) < count).map(([content]) => JSON.stringify(content.slice(0, 80)));
      if (lost.length > 0) violation(`${callName(call)} destroyed what a file inside held: ${lost.join(", ")} (its answer: ${shown(box, answer)})`, "insideDestroyed", call.index);
    }
  }
  if (operation.oracles.includes("secretImported")) {
    const imported = findFile(box.root, (content) => content.includes(SECRET));
    if (imported !== undefined) violation(`a file inside the workspace now holds content from outside: ${imported}`, "secretImported", "no single call");
  }
}

/** The special files a tree lays out, as a hang names them: `a FIFO at ws/special-fifo`. */
export function specialsOf(tree: Tree): string {
  return laidOut(tree)
    .flatMap((entry) => (entry.kind === "special" ? [`${SPECIAL_NAMES[entry.special]} at ${["ws", ...entry.at].join("/")}`] : []))
    .join(", ");
}

/** The title a property states: what the tool does, then each oracle's promise. */
function titleOf(operation: Operation): string {
  const promises = operation.oracles.map((id) => ORACLES[id].promise);
  return `a tool that ${operation.does} ${promises.slice(0, -1).join(", ")}${promises.length > 1 ? " and " : ""}${promises.at(-1)}`;
}

export function containmentOf(operation: Operation): AuditProperty<OperationCase> {
  return {
    id: containmentId(operation.id),
    gate: "workspacePath",
    kind: "guarantee",
    title: titleOf(operation),
    needs: ["createWorkspaceTools"],
    // Every oracle names its consequence; what is left (a tool that throws) breaks a hardening rule.
    consequence: "hardening broken",
    threat: (value) => treeThreat(value.tree),
    lesserCases,
    notApplicable: (target) =>
      offeredTools(target).some((tool) => tool.classification.kind === "operation" && tool.classification.operation === operation.id)
        ? undefined
        : `the target offers no tool that ${operation.does}`,
    budgetScale: TOOL_TREE_SCALE,
    arbitrary: operationCases(operation),
    casesIn: probeCount,
    render: (value) => caseScene(value),
    async check(target, value) {
      await inCaseSandbox(target, value, async (box, root) => {
        const tools = surfaceOf(target, root).of(operation.id);
        if (tools.length === 0) throw new Error(`the target offers no tool that ${operation.does} on ${root}`);
        const calls = callsOf(operation, tools, box, value.probes, value.tree);
        const watch = watchCalls(box, paceOf(target), specialsOf(value.tree));
        try {
          await (operation.changes ? judgeChanging(operation, box, calls, watch) : judgeReadOnly(box, calls, watch));
        } finally {
          await watch.stop();
        }
      });
    },
  };
}

/** One property per operation attacked by a tree, in the catalogue's order (an archive's extraction: archives.ts). */
export const OPERATION_PROPERTIES: readonly AuditProperty<OperationCase>[] = OPERATIONS.filter((operation) => operation.attacked === "tree").map(containmentOf);

export const containmentRead = OPERATION_PROPERTIES[0] as AuditProperty<OperationCase>;
export const containmentWrite = OPERATION_PROPERTIES.find((property) => property.id === containmentId("write")) as AuditProperty<OperationCase>;
