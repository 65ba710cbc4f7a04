/**
 * Sequences: the workspace changes under the tools' feet. Approved bash commands create symlinks (in
 * and out of the workspace), hardlinks between workspace entries, rename and replace entries, and are
 * interleaved with reads and writes; after every read or write nothing outside has changed, no read
 * returned canary content, and a successful write left its content inside.
 *
 * Bash acts only on top-level names of the workspace, whose parent is the real root, and never writes
 * through a link (`ln -P`, `mv -T`, `rm` before create), so whatever reaches a canary did so through
 * the tools. Hardlinks here join workspace entries only; a hardlink to an outside file is the known
 * limit that `limits.hardlink` states on its own.
 *
 * `sequences.rootSwap`: after the tools are created and before their first call, the root itself is
 * replaced by a symlink to a neighbour (moved aside or removed first); no call then reads, writes or
 * runs in the neighbour, because the tools fixed the root's real path when they were created.
 */
import fc from "fast-check";
import { mkdir, rename, rm, symlink } from "node:fs/promises";
import { join, relative } from "node:path";
import { type Candidate, candidateText, fsTree, linkTarget, neighbourArea, relativeCandidate, renderCandidate, treeName } from "../arbitraries/index.js";
import { type AuditProperty, type NamedTools, execute, inSandbox, toolsOf, violation } from "../property.js";
import { containsFileWith } from "./containment.js";
import { shellWord } from "../../shell-word.js";
import { CANARY_FILE, SECRET, type Sandbox } from "../../sandbox/sandbox.js";
import { type Area, BOX_NAME, type LinkTarget, type Tree, areaName, areaPath, linkText, materialize } from "../../sandbox/tree.js";

interface World {
  box: Sandbox;
  tools: NamedTools;
  step: number;
}

type Step =
  | { kind: "symlink"; name: string; target: LinkTarget }
  | { kind: "hardlink"; name: string; existing: string }
  | { kind: "rename"; from: string; to: string }
  | { kind: "mkdir"; name: string }
  | { kind: "replaceWithFile"; name: string }
  | { kind: "read"; candidate: Candidate }
  | { kind: "write"; candidate: Candidate };

const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

function shellFor(step: Step, box: Sandbox): string | undefined {
  switch (step.kind) {
    case "symlink":
      return `rm -rf -- ${quote(step.name)} && ln -s -- ${quote(linkText(box, [step.name], step.target))} ${quote(step.name)}`;
    case "hardlink":
      return `ln -P -f -T -- ${quote(step.existing)} ${quote(step.name)}`;
    case "rename":
      return `mv -T -f -- ${quote(step.from)} ${quote(step.to)}`;
    case "mkdir":
      return `rm -f -- ${quote(step.name)}; mkdir -p -- ${quote(step.name)}`;
    case "replaceWithFile":
      return `rm -rf -- ${quote(step.name)} && printf 'plain file\\n' > ${quote(step.name)}`;
    default:
      return undefined;
  }
}

function describeStep(step: Step): string {
  switch (step.kind) {
    case "symlink":
      return `bash: ln -s ${JSON.stringify(step.target)} ${step.name}`;
    case "hardlink":
      return `bash: ln ${step.existing} ${step.name}`;
    case "rename":
      return `bash: mv -T ${step.from} ${step.to}`;
    case "mkdir":
      return `bash: mkdir ${step.name}`;
    case "replaceWithFile":
      return `bash: replace ${step.name} with a file`;
    case "read":
    case "write":
      return `${step.kind} ${renderCandidate(step.candidate)}`;
  }
}

class StepCommand implements fc.AsyncCommand<object, World> {
  constructor(readonly step: Step) {}
  check() {
    return true;
  }
  async run(_model: object, world: World) {
    world.step++;
    const shell = shellFor(this.step, world.box);
    if (shell !== undefined) {
      await execute(world.tools.bash, { command: shell });
      return;
    }
    const { step } = this;
    if (step.kind === "read") {
      const result = await execute(world.tools.read, { path: candidateText(world.box, step.candidate) });
      if (String(result.content).includes(SECRET)) violation(`call ${world.step}: read returned canary content`, "secretInAnswer", world.step - 1);
    } else if (step.kind === "write") {
      const content = `sequence write ${world.step}`;
      const result = await execute(world.tools.write, { path: candidateText(world.box, step.candidate), content });
      if (result.isError !== true && !containsFileWith(world.box.root, content))
        violation(`call ${world.step}: write reported success but its content is nowhere inside the workspace`, "falseSuccess", world.step - 1);
    }
    const changes = await world.box.canaryChanges();
    if (changes.length > 0) violation(`call ${world.step} changed outside: ${changes.join(", ")}`, "outsideChanged", world.step - 1);
  }
  toString() {
    return describeStep(this.step);
  }
}

const candidateArb: fc.Arbitrary<Candidate> = relativeCandidate().map((text) => ({ form: "text", text }));

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("symlink" as const), name: treeName(), target: linkTarget() }),
  fc.record({ kind: fc.constant("hardlink" as const), name: treeName(), existing: treeName() }),
  fc.record({ kind: fc.constant("rename" as const), from: treeName(), to: treeName() }),
  fc.record({ kind: fc.constant("mkdir" as const), name: treeName() }),
  fc.record({ kind: fc.constant("replaceWithFile" as const), name: treeName() }),
  fc.record({ kind: fc.constant("read" as const), candidate: candidateArb }),
  fc.record({ kind: fc.constant("write" as const), candidate: candidateArb }),
);

interface SequenceCase {
  tree: Tree;
  commands: Iterable<fc.AsyncCommand<object, World>>;
}

export const sequencesBash: AuditProperty<SequenceCase> = {
  id: "sequences.bash",
  gate: "workspacePath",
  kind: "guarantee",
  title: "links, renames and replacements made by bash never let read or write escape",
  needs: ["createWorkspaceTools"],
  consequence: "hardening broken",
  // Its escapes go through the links its bash steps make (or its tree lays out).
  threat: () => "a link inside the workspace",
  budgetScale: 0.3,
  arbitrary: fc.record({
    tree: fsTree(),
    commands: fc.commands([stepArb.map((step) => new StepCommand(step))], { maxCommands: 12 }),
  }),
  // Each step is one call, bash's included: the calls are the steps, as the case made them.
  render: ({ tree }) => ({ workspace: { name: "ws", spelling: "canonical", tree } }),
  async check(target, { tree, commands }) {
    await inSandbox(async (box) => {
      await materialize(tree, box);
      const tools = toolsOf(target, box.root);
      await fc.asyncModelRun(() => ({ model: {}, real: { box, tools, step: 0 } }), commands);
    });
  },
};

interface RootSwapCase {
  /** How the attacker replaces the root: moved aside, or removed, then a symlink in its place. */
  swap: "renameThenLink" | "removeThenLink";
  to: Area;
  link: "absolute" | "relative";
  call: "read" | "writeNew" | "writeExisting" | "bash";
}

const ROOT_SWAP_CALLS: Record<RootSwapCase["call"], string> = {
  read: `read ${CANARY_FILE}`,
  writeNew: "write pwned.txt",
  writeExisting: `write ${CANARY_FILE}`,
  bash: `bash cat ${CANARY_FILE}`,
};

/** The root the tools are made on: in scratch, so that moving it aside changes no canary; and as a counterexample names it. */
const LIVE_ROOT = "live";
const SWAPPED_ROOT = `"${BOX_NAME}"/scratch/${LIVE_ROOT}`;

export const sequencesRootSwap: AuditProperty<RootSwapCase> = {
  id: "sequences.rootSwap",
  gate: "workspacePath",
  kind: "guarantee",
  title: "a root swapped for a symlink after the tools were created does not move the boundary",
  needs: ["createWorkspaceTools"],
  consequence: "hardening broken",
  threat: () => "the root replaced",
  arbitrary: fc.record({
    swap: fc.constantFrom("renameThenLink" as const, "removeThenLink" as const),
    to: neighbourArea(),
    link: fc.constantFrom("absolute" as const, "relative" as const),
    call: fc.constantFrom("read" as const, "writeNew" as const, "writeExisting" as const, "bash" as const),
  }),
  // The swap as shell words, with the sandbox's directory in "$BOX".
  render: ({ swap, to, link }) => ({
    setup: [
      `mkdir ${SWAPPED_ROOT} before the tools are made; then, before the first call: ${swap === "renameThenLink" ? `mv ${SWAPPED_ROOT} ${SWAPPED_ROOT}.old` : `rm -r ${SWAPPED_ROOT}`}; ln -s ${link === "absolute" ? `"${BOX_NAME}"/${shellWord(areaName(to))}` : shellWord(`../${areaName(to)}`)} ${SWAPPED_ROOT}`,
    ],
  }),
  async check(target, { swap, to, link, call }) {
    await inSandbox(async (box) => {
      // The root lives in scratch, so that moving it aside is no change to a canary.
      const root = join(box.scratch, LIVE_ROOT);
      await mkdir(root);
      const tools = toolsOf(target, root);
      // A server process is handed its root when it starts: start it before the swap, as creation would be.
      await target.start?.(root);
      if (swap === "renameThenLink") await rename(root, `${root}.old`);
      else await rm(root, { recursive: true });
      const destination = areaPath(box, to);
      await symlink(link === "absolute" ? destination : relative(box.scratch, destination), root);
      const result =
        call === "read"
          ? await execute(tools.read, { path: CANARY_FILE })
          : call === "bash"
            ? await execute(tools.bash, { command: `cat ${CANARY_FILE}` })
            : await execute(tools.write, { path: call === "writeNew" ? "pwned.txt" : CANARY_FILE, content: "after the root was swapped" });
      if (String(result.content).includes(SECRET)) violation(`${ROOT_SWAP_CALLS[call]} returned the file the swapped root now points at`);
    });
  },
};
