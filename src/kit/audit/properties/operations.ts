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
 * - A changing operation (write, edit, mkdir, move, copy, delete) is asked each probe once, in order.
 *   No answer may hold the secret; a write or an edit that answers success must have put its marker
 *   in a file inside; a move may not make the content of any file inside vanish (it never replaces
 *   its destination); after all probes no file inside holds the secret (nothing was brought in).
 * After every run nothing outside has changed (the canaries, property.ts).
 */
import fc from "fast-check";
import { resolve } from "node:path";
import {
  type Attack,
  type Candidate,
  type OperationProbe,
  type ProbeConstraints,
  candidate,
  candidateText,
  creationAttack,
  linkAttackOpening,
  listingAttack,
  operationProbe,
  targetLeaf,
  temporaryLinkAttack,
  treeAnd,
  workspaceRoot,
} from "../arbitraries/index.js";
import { type AuditProperty, answered, inFlight, portable, violation } from "../property.js";
import { showAnswers, showValue } from "../show.js";
import { type ContainmentCase, caseScene, findFile, holds, inCaseSandbox, probeCount, treeThreat, withoutLinks } from "./containment.js";
import { ORACLES, OPERATIONS, type Operation, type OperationInput, containmentId } from "../../operations/catalog.js";
import { type OperationTool, untranscribed } from "../../operations/surface.js";
import { offeredTools, surfaceOf } from "../../operations/target.js";
import { SECRET, type Sandbox } from "../../sandbox/sandbox.js";
import type { Tree } from "../../sandbox/tree.js";
import type { ToolResult } from "../../../gates/tool.js";

/** A probe and the index of the operation's tool it calls (shrinks to the first tool that fails). */
export type ToolProbe = OperationProbe & { tool: number };

export type OperationCase = ContainmentCase<ToolProbe>;

/**
 * Runs per block, a fifth of the other properties': each probe is a tool call (over MCP a round trip),
 * so ten trees of some thirty probes cost about what fifty trees of five did.
 */
const TOOL_TREE_SCALE = 0.2;

/** What an aimed path ends in for an operation on a directory: mostly the directory itself. */
const directoryLeaf = () => fc.oneof({ weight: 3, arbitrary: fc.constant("") }, { weight: 1, arbitrary: targetLeaf() });

/** The workspace itself, as a model names it when it lists or searches everything. */
const theRoot = () => fc.constantFrom<Candidate>({ form: "text", text: "" }, { form: "text", text: "." }, { form: "text", text: "./" });

export function operationCases(operation: Operation, constraints: ProbeConstraints = {}): fc.Arbitrary<OperationCase> {
  const probe = (aimed: fc.Arbitrary<Candidate>, attack: Attack | undefined, tree: Tree) =>
    fc.tuple(operationProbe(operation.roles, aimed, attack, tree, { against: operation.id === "grep" ? "content" : "names" }), fc.nat({ max: 15 })).map(([drawn, tool]) => ({ ...drawn, tool }));
  const generic = operation.onDirectory ? fc.oneof({ weight: 2, arbitrary: candidate() }, { weight: 1, arbitrary: theRoot() }) : candidate();
  // A tool that writes a file may write a temporary copy first, one that makes a name may make it
  // through a link, and one that lists a directory may look through its links: their trees open with
  // those plants too.
  const writesFile = operation.roles.includes("content") || operation.roles.includes("newText");
  const createsName = writesFile || operation.roles.includes("destination") || operation.id === "mkdir";
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
  const aimed = treeAnd(probe, generic, { ...(operation.onDirectory ? { leaf: directoryLeaf() } : {}), ...attack, ...constraints });
  return fc.tuple(workspaceRoot(), aimed).map(([root, { tree, probes }]) => ({ root, tree, probes }));
}

/** One call of a run: which probe, which tool, and the input it is sent. */
interface Call {
  index: number;
  tool: OperationTool;
  input: OperationInput;
  /** What a write or an edit puts in the file, for the oracle to find again. */
  marker?: string;
}

function callsOf(operation: Operation, tools: readonly OperationTool[], box: Sandbox, probes: readonly ToolProbe[]): Call[] {
  const text = (candidate: Candidate) => candidateText(box, candidate);
  return probes.map((probe, index) => {
    // Numbered as the counterexample numbers its calls, and closed, so that call 1's is no prefix of call 10's.
    const marker = `written by the audit, call ${index + 1}.`;
    const input: OperationInput = {
      ...(probe.path === undefined ? {} : { path: text(probe.path) }),
      ...(probe.paths === undefined ? {} : { paths: probe.paths.map(text) }),
      ...(probe.source === undefined ? {} : { source: text(probe.source) }),
      ...(probe.destination === undefined ? {} : { destination: text(probe.destination) }),
      ...(probe.pattern === undefined ? {} : { pattern: probe.pattern }),
      // Every file the tree lays out, and every canary, ends with a newline: an edit of one meets it.
      ...(operation.id === "write" ? { content: marker } : operation.id === "edit" ? { oldText: "\n", newText: `\n${marker}\n` } : {}),
    };
    return { index, tool: tools[probe.tool % tools.length] as OperationTool, input, ...(operation.roles.includes("content") || operation.id === "edit" ? { marker } : {}) };
  });
}

const ask = (call: Call): Promise<ToolResult> => answered(call.tool.name, call.tool.call(call.input));

/** An answer as a reason quotes it: its content escaped and folded, at most 200 characters of it. */
const shown = (result: ToolResult) => {
  const content = String(result.content);
  return content.length > 200 ? `${showValue(content.slice(0, 200))}… (${content.length} characters)` : showValue(content);
};

/** What a reader compares of two answers: the content, and the error flag when it is set. */
const answerText = (result: ToolResult) => `${String(result.content)}${result.isError === true ? "\n(isError)" : ""}`;

function refuseSecrets(calls: readonly Call[], answers: readonly ToolResult[], world: string): void {
  for (const [position, answer] of answers.entries()) {
    const call = calls[position] as Call;
    if (String(answer.content).includes(SECRET)) violation(`${call.tool.name} (call ${call.index + 1}) returned content from outside${world}: ${shown(answer)}`, "secretInAnswer", call.index);
  }
}

const sameAnswer = (one: ToolResult, other: ToolResult) => one.content === other.content && (one.isError === true) === (other.isError === true);

async function judgeReadOnly(box: Sandbox, calls: readonly Call[]): Promise<void> {
  const first = await inFlight(calls, ask);
  refuseSecrets(calls, first, "");
  const restore = await box.perturbOutside();
  let second: ToolResult[];
  try {
    // The same calls again: a counterexample shows each once.
    second = await untranscribed(() => inFlight(calls, ask));
  } finally {
    await restore();
  }
  refuseSecrets(calls, second, " once the outside had changed");
  const moved = calls.filter((_call, position) => !sameAnswer(first[position] as ToolResult, second[position] as ToolResult));
  const again = await untranscribed(() => inFlight(moved, ask));
  for (const [position, call] of moved.entries()) {
    const before = first[calls.indexOf(call)] as ToolResult;
    if (!sameAnswer(again[position] as ToolResult, before)) continue;
    const after = second[calls.indexOf(call)] as ToolResult;
    violation(
      `${call.tool.name} (call ${call.index + 1}) answered otherwise once only the outside had changed, and as before once it was put back:${showAnswers(portable(box, answerText(before)), portable(box, answerText(after)), ["as the outside was", "once it had changed"])}`,
      "outsideRevealed",
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

async function judgeChanging(operation: Operation, box: Sandbox, calls: readonly Call[]): Promise<void> {
  const keeps = operation.oracles.includes("insideDestroyed");
  for (const call of calls) {
    const before = keeps ? fileContents(box.root) : undefined;
    const answer = await ask(call);
    refuseSecrets([call], [answer], "");
    if (operation.oracles.includes("falseSuccess") && answer.isError !== true && call.marker !== undefined) {
      const marker = call.marker;
      const direct = operation.id === "write" && call.input.path !== undefined && (await holds(box.root, resolve(box.root, call.input.path), marker));
      if (!direct && findFile(box.root, (content) => content.includes(marker)) === undefined)
        violation(`${call.tool.name} (call ${call.index + 1}) reported success (${shown(answer)}) but no file inside the workspace holds what it wrote`, "falseSuccess", call.index);
    }
    if (before !== undefined) {
      const after = fileContents(box.root);
      const lost = [...before].filter(([content, count]) => (after.get(content) ?? 0) < count).map(([content]) => JSON.stringify(content.slice(0, 80)));
      if (lost.length > 0) violation(`${call.tool.name} (call ${call.index + 1}) destroyed what a file inside held: ${lost.join(", ")} (its answer: ${shown(answer)})`, "insideDestroyed", call.index);
    }
  }
  if (operation.oracles.includes("secretImported")) {
    const imported = findFile(box.root, (content) => content.includes(SECRET));
    if (imported !== undefined) violation(`a file inside the workspace now holds content from outside: ${imported}`, "secretImported", "no single call");
  }
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
    withoutLinks,
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
        const calls = callsOf(operation, tools, box, value.probes);
        await (operation.changes ? judgeChanging(operation, box, calls) : judgeReadOnly(box, calls));
      });
    },
  };
}

/** One property per operation, in the catalogue's order. */
export const OPERATION_PROPERTIES: readonly AuditProperty<OperationCase>[] = OPERATIONS.map(containmentOf);

export const containmentRead = OPERATION_PROPERTIES[0] as AuditProperty<OperationCase>;
export const containmentWrite = OPERATION_PROPERTIES.find((property) => property.id === containmentId("write")) as AuditProperty<OperationCase>;
