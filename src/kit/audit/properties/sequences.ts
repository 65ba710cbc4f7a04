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
 * `sequences.rootSwap`: after the tools are created and before their first call, the root is moved
 * from under them: replaced by a symlink to a neighbour (moved aside or removed first), or, when the
 * tools were handed a link to the root, that link pointed at the neighbour; every way is tried in every
 * run. No call then reads, writes or runs in the neighbour, because the tools fixed the root's real
 * path when they were created.
 */
import fc from "fast-check";
import { mkdir, rename, rm, symlink } from "node:fs/promises";
import { join, relative } from "node:path";
import { type Candidate, allOfItems, candidateText, fsTree, linkTarget, neighbourArea, relativeCandidate, treeName } from "../arbitraries/index.js";
import { type AuditProperty, type NamedTools, execute, inSandbox, toolsOf, violation } from "../runner/property.js";
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

/** Makes one step against the world: a bash step, or a read or write judged at once (and the canaries after it). */
async function runStep(step: Step, world: World): Promise<void> {
  world.step++;
  const shell = shellFor(step, world.box);
  if (shell !== undefined) {
    await execute(world.tools.bash, { command: shell });
    return;
  }
  if (step.kind === "read") {
    const result = await execute(world.tools.read, { path: candidateText(world.box, step.candidate) });
    if (String(result.content).includes(SECRET)) violation(`call ${world.step}: read returned canary content`, "secretInAnswer", world.step - 1);
  } else if (step.kind === "write") {
    const content = `sequence write ${world.step}`;
    const result = await execute(world.tools.write, { path: candidateText(world.box, step.candidate), content });
    if (result.isError !== true && !containsFileWith(world.box.root, content)) {
      const outside = await world.box.canaryChanges();
      if (outside.length > 0) violation(`call ${world.step}: write reported success and changed outside the workspace: ${outside.join(", ")}`, "outsideChanged", world.step - 1);
      violation(`call ${world.step}: write reported success but its content is neither inside the workspace nor outside it`, "falseSuccess", world.step - 1);
    }
  }
  const changes = await world.box.canaryChanges();
  if (changes.length > 0) violation(`call ${world.step} changed outside: ${changes.join(", ")}`, "outsideChanged", world.step - 1);
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

/**
 * A tree and the steps made on it, in order. The steps are a plain list, not `fc.commands`: a list
 * shrinks without knowing which steps ran, so the path of a shrunk case replays it (`--path`), where
 * `fc.commands` shrinks by what its last run executed and cannot replay without its own replay path.
 */
interface SequenceCase {
  tree: Tree;
  steps: readonly Step[];
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
    steps: fc.array(stepArb, { maxLength: 12 }),
  }),
  // Each step is one call, bash's included: the calls are the steps, as the case made them.
  render: ({ tree }) => ({ workspace: { name: "ws", spelling: "canonical", tree } }),
  async check(target, { tree, steps }) {
    await inSandbox(async (box) => {
      await materialize(tree, box);
      const world: World = { box, tools: toolsOf(target, box.root), step: 0 };
      for (const step of steps) await runStep(step, world);
    });
  },
};

/** How the tools are handed the root, and how the attacker moves it after they were made. */
interface RootSwap {
  /** The root itself, or a link to it (`scratch/alias-N -> scratch/live-N`), as a caller may spell it. */
  given: "the root" | "a link to the root";
  /** The root moved aside or removed and a symlink put in its place, or the link the tools were given pointed elsewhere. */
  swap: "renameThenLink" | "removeThenLink" | "retargetLink";
}

/** Every way the root can be moved from under the tools, each tried in every run (droppable.ts shrinks to the one that fails). */
const ROOT_SWAPS: readonly RootSwap[] = [
  { given: "the root", swap: "renameThenLink" },
  { given: "the root", swap: "removeThenLink" },
  { given: "a link to the root", swap: "renameThenLink" },
  { given: "a link to the root", swap: "removeThenLink" },
  { given: "a link to the root", swap: "retargetLink" },
];

type RootSwapCall = "read" | "writeNew" | "writeExisting" | "bash";

const ROOT_SWAP_CALLS: Record<RootSwapCall, string> = {
  read: `read ${CANARY_FILE}`,
  writeNew: "write pwned.txt",
  writeExisting: `write ${CANARY_FILE}`,
  bash: `bash cat ${CANARY_FILE}`,
};

interface RootSwapCase {
  swaps: readonly RootSwap[];
  to: Area;
  link: "absolute" | "relative";
  /** The calls made after the swap, in order: the first is the tools' first call. */
  calls: readonly RootSwapCall[];
}

/** The root (and its link) of the `index`-th swap: in scratch, so that moving them changes no canary; and as a counterexample names them. */
const liveRoot = (index: number) => `live-${index}`;
const rootLink = (index: number) => `alias-${index}`;
const inScratch = (name: string) => `"${BOX_NAME}"/scratch/${name}`;

/** A swap as shell words, with the sandbox's directory in "$BOX": what is made, what the tools are handed, how the root moves. */
function describeSwap({ given, swap }: RootSwap, index: number, to: Area, link: "absolute" | "relative"): string {
  const root = inScratch(liveRoot(index));
  const alias = inScratch(rootLink(index));
  const moved = swap === "retargetLink" ? alias : root;
  const target = link === "absolute" ? `"${BOX_NAME}"/${shellWord(areaName(to))}` : shellWord(`../${areaName(to)}`);
  const made = given === "the root" ? `mkdir ${root}; the tools are made on ${root}` : `mkdir ${root}; ln -s ${root} ${alias}; the tools are made on ${alias}`;
  const move = swap === "renameThenLink" ? `mv ${root} ${root}.old` : `rm -r ${moved}`;
  return `${made}; then, before their first call: ${move}; ln -s ${target} ${moved}`;
}

export const sequencesRootSwap: AuditProperty<RootSwapCase> = {
  id: "sequences.rootSwap",
  gate: "workspacePath",
  kind: "guarantee",
  title: "a root moved from under the tools after they were created does not move the boundary",
  needs: ["createWorkspaceTools"],
  consequence: "hardening broken",
  threat: () => "the root replaced",
  // Every run tries every swap: a few runs draw the rest (where the symlink leads, and how).
  maxRuns: 5,
  arbitrary: fc.record({
    swaps: allOfItems(ROOT_SWAPS),
    to: neighbourArea(),
    link: fc.constantFrom("absolute" as const, "relative" as const),
    calls: allOfItems(Object.keys(ROOT_SWAP_CALLS) as RootSwapCall[]),
  }),
  // Each swap as shell words; the calls after it are the case's own, as it made them.
  render: ({ swaps, to, link }) => ({ setup: swaps.map((swap, index) => describeSwap(swap, index, to, link)) }),
  async check(target, { swaps, to, link, calls }) {
    await inSandbox(async (box) => {
      for (const [index, rootSwap] of swaps.entries()) {
        // The root and its link live in scratch, so that moving them is no change to a canary.
        const root = join(box.scratch, liveRoot(index));
        const alias = join(box.scratch, rootLink(index));
        await mkdir(root);
        await symlink(root, alias);
        const given = rootSwap.given === "the root" ? root : alias;
        const tools = toolsOf(target, given);
        // A server process is handed its root when it starts: start it before the swap, as creation would be.
        await target.start?.(given);
        const destination = areaPath(box, to);
        const moved = rootSwap.swap === "retargetLink" ? alias : root;
        if (rootSwap.swap === "renameThenLink") await rename(root, `${root}.old`);
        else await rm(moved, { recursive: true });
        await symlink(link === "absolute" ? destination : relative(box.scratch, destination), moved);
        for (const call of calls) {
          const result =
            call === "read"
              ? await execute(tools.read, { path: CANARY_FILE })
              : call === "bash"
                ? await execute(tools.bash, { command: `cat ${CANARY_FILE}` })
                : await execute(tools.write, { path: call === "writeNew" ? "pwned.txt" : CANARY_FILE, content: "after the root was moved" });
          if (String(result.content).includes(SECRET)) violation(`after swap ${index + 1}, ${ROOT_SWAP_CALLS[call]} returned the file the moved root now points at`);
        }
        const changes = await box.canaryChanges();
        if (changes.length > 0) violation(`after swap ${index + 1}, the calls changed what the moved root now points at:\n  ${changes.join("\n  ")}`, "outsideChanged");
      }
    });
  },
};
