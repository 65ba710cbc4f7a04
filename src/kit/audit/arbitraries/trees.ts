/**
 * Generated workspace trees (directories, files, symlinks in chains, loops and dangling, hardlinks) and
 * candidates aimed at them. Trees are plain data (sandbox/tree.ts) laid out by `materialize`.
 *
 * Promises: link texts climb at most two `..` (the `text` form) or name an area symbolically, and
 * candidates keep `maxParentSteps`, both by construction, so a chain of climbs stays inside the
 * sandbox's guard directories.
 */
import fc from "fast-check";
import { CANARY_DIR, CANARY_FILE } from "../../sandbox/sandbox.js";
import { MOST_NAMED_TWINS } from "../../sandbox/root-twins.js";
import type { Area, LinkTarget, Tree, TreeEntry } from "../../sandbox/tree.js";
import { type Candidate, type CandidateConstraints, DEFAULT_MAX_PARENT_STEPS, area, neighbourArea, targetLeaf } from "./candidates.js";
import { withClimbs } from "./climbs.js";
import { allOf, stableChain } from "./droppable.js";
import { plainSegment, treeName } from "./names.js";

export interface TreeConstraints {
  /** The most entries a tree holds (default 10). */
  maxEntries?: number;
}

/** Mostly top-level names, so that entries find their parent; sometimes two or three deep. */
export function treePath(): fc.Arbitrary<readonly string[]> {
  return fc.oneof({ weight: 3, arbitrary: treeName().map((name) => [name]) }, { weight: 1, arbitrary: fc.array(treeName(), { minLength: 2, maxLength: 3 }) });
}

/** Link targets: into the workspace, out of it, into a sibling, or texts such as `..` and self loops. */
export function linkTarget(): fc.Arbitrary<LinkTarget> {
  return fc.oneof(
    fc.record({
      form: fc.constantFrom("absolute" as const, "relative" as const),
      area: area(),
      path: fc.oneof(
        { weight: 2, arbitrary: fc.constant([]) },
        { weight: 1, arbitrary: fc.array(fc.oneof(treeName(), fc.constantFrom(CANARY_DIR, CANARY_FILE)), { minLength: 1, maxLength: 2 }) },
      ),
    }),
    fc.record({
      form: fc.constant("text" as const),
      // No text climbs through another link before its `..` (like `b/../..`): climbs would compound
      // along a chain and could leave the sandbox's guard directories.
      text: fc.constantFrom(".", "..", "../", "../..", "./", "a", "b", "./a", "a/b", "..foo", "../ws-other", "../outside/dir"),
    }),
  );
}

/** Names a tool may give the temporary or backup copy of a file `name`: where a planted link waits for a careless write. */
export const TEMPORARY_SUFFIXES = [".tmp", "~", ".bak"] as const;

/** One probe an attack makes: what it names, where. */
export interface Aim {
  candidate: Candidate;
  /** The end of a move or a copy the candidate belongs at (a new name: the destination); either, drawn, when unset. */
  end?: "source" | "destination";
  /** Which of the tool's optional arguments the probe sends (operations/classify.ts, `optionVariant`); drawn when unset. */
  variant?: number;
}

/** Entries laid out first, and the aims of the first probes, which use them. */
export interface Attack {
  entries: TreeEntry[];
  aims: Aim[];
}

/**
 * What an operation's probe names through an attack's entries: a file that exists (to read, change or
 * move away), a new name (to create, or to move to), or a directory (to list or search). A write
 * names both an existing file and a new one.
 */
export type Intent = { kind: "existing" | "fresh" | "directory"; end?: "source" | "destination" };

/** The leaf an intent names below a place that leads somewhere: the canary file, a new file, or the place itself. */
export function aimsBelow(place: string, intents: readonly Intent[], variant?: number): Aim[] {
  return intents.map(({ kind, end }) => ({
    candidate: { form: "text", text: kind === "directory" ? place : `${place}/${kind === "existing" ? CANARY_FILE : "new.txt"}` },
    ...(end === undefined ? {} : { end }),
    ...(variant === undefined ? {} : { variant }),
  }));
}

/** Attacks as one: their entries, then their aims, in order. */
export function joinAttacks(attacks: readonly Attack[]): Attack {
  return { entries: attacks.flatMap((attack) => attack.entries), aims: attacks.flatMap((attack) => attack.aims) };
}

/**
 * A top-level file with a link planted at each name a tool may give its temporary or backup copy
 * (`a.tmp`, `a~`, `a.bak`), each to a canary file outside, and the file as the candidate: a write that
 * follows such a link instead of creating its file exclusively overwrites the canary.
 */
export function temporaryLinkAttack(): fc.Arbitrary<Attack> {
  const target = fc.record({ form: fc.constantFrom("absolute" as const, "relative" as const), area: neighbourArea(), path: fc.constant([CANARY_FILE]) });
  return fc.tuple(treeName(), fc.tuple(...TEMPORARY_SUFFIXES.map(() => target))).map(([name, targets]) => ({
    entries: [{ kind: "file", at: [name] }, ...targets.map((linked, index): TreeEntry => ({ kind: "symlink", at: [`${name}${TEMPORARY_SUFFIXES[index]}`], target: linked }))],
    aims: [{ candidate: { form: "text", text: name } }],
  }));
}

/**
 * Two top-level links, one to a canary file outside and one to a canary directory, and the workspace
 * itself as the candidate: a listing that looks at an entry through its link, or walks into it, shows
 * what is outside.
 */
export function listingAttack(): fc.Arbitrary<Attack> {
  const link = (path: fc.Arbitrary<readonly string[]>) => fc.record({ form: fc.constantFrom("absolute" as const, "relative" as const), area: neighbourArea(), path });
  return fc
    .record({ names: fc.uniqueArray(treeName(), { minLength: 2, maxLength: 2 }), toFile: link(fc.constantFrom([CANARY_FILE], [CANARY_DIR, CANARY_FILE])), toDirectory: link(fc.constant([])) })
    .map(({ names: [file = "a", directory = "b"], toFile, toDirectory }) => ({
      entries: [
        { kind: "symlink", at: [file], target: toFile },
        { kind: "symlink", at: [directory], target: toDirectory },
      ],
      aims: [{ candidate: { form: "text", text: "" } }],
    }));
}

/** The areas a name can be made in through a link: outside/, and each twin a root's name can have. */
const CREATION_AREAS: readonly Area[] = ["outside", ...Array.from({ length: MOST_NAMED_TWINS }, (_, index): Area => `sibling${index}`)];

/**
 * A sweep of top-level links, to outside/ and to each of the root's twins (most of them in each tree:
 * a check may let one twin through and hold the rest), a file beside them (something to move or
 * copy), and a new name through each link as the first probes: what a tool that makes a name must
 * refuse. Shrinking drops the links a failure does not need, so a counterexample keeps the one it does.
 */
export function creationAttack(): fc.Arbitrary<Attack> {
  const planted = fc.constantFrom(false, true, true, true);
  return fc
    .record({
      names: fc.uniqueArray(treeName(), { minLength: 2, maxLength: 2 }),
      form: fc.constantFrom("absolute" as const, "relative" as const),
      areas: fc.tuple(...CREATION_AREAS.map(() => planted)).map((chosen) => CREATION_AREAS.filter((_, index) => chosen[index])).filter((areas) => areas.length > 0),
      created: fc.constantFrom("new.txt", "made"),
    })
    .map(({ names: [base = "a", file = "b"], form, areas, created }) => {
      const links = areas.map((where, index) => ({ name: index === 0 ? base : `${base}${index}`, where }));
      return {
        entries: [...links.map(({ name, where }): TreeEntry => ({ kind: "symlink", at: [name], target: { form, area: where, path: [] } })), { kind: "file", at: [file] }],
        aims: links.map(({ name }): Aim => ({ candidate: { form: "text", text: `${name}/${created}` }, end: "destination" })),
      };
    });
}

/** `linkAttack()` as an attack a tree opens with. */
export function linkAttackOpening(): fc.Arbitrary<Attack> {
  return linkAttack().map(({ link, candidate }) => ({ entries: [link], aims: [{ candidate }] }));
}

export function treeEntry(): fc.Arbitrary<TreeEntry> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.record({ kind: fc.constant("dir" as const), at: treePath() }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("file" as const), at: treePath() }) },
    { weight: 4, arbitrary: fc.record({ kind: fc.constant("symlink" as const), at: treePath(), target: linkTarget() }) },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant("hardlink" as const), at: treePath(), to: fc.record({ area: fc.constant("root" as const), path: treePath() }) }),
    },
  );
}

/** Trees of directories, files, symlinks (chains, loops, dangling) and hardlinks between workspace files. */
export function fsTree({ maxEntries = 10 }: TreeConstraints = {}): fc.Arbitrary<Tree> {
  return fc.array(treeEntry(), { maxLength: maxEntries });
}

/** A hardlink inside the workspace to the outside canary's file: the known limit of every path check. */
export function hardlinkToOutside(): fc.Arbitrary<TreeEntry> {
  return fc.record({ kind: fc.constant("hardlink" as const), at: treeName().map((name) => [name]), to: fc.constant({ area: "outside" as const }) });
}

export interface AimConstraints extends CandidateConstraints {
  /** What an aimed path ends in after the entry it walks through (default `targetLeaf()`: a file beside it, a tree name, a new file). */
  leaf?: fc.Arbitrary<string>;
}

/** Candidates that walk into the tree's own entries, then on: `link/secret.txt`, `a/l/../x`, … */
export function candidateThrough(tree: Tree, generic: fc.Arbitrary<Candidate>, { maxParentSteps = DEFAULT_MAX_PARENT_STEPS, leaf = targetLeaf() }: AimConstraints = {}): fc.Arbitrary<Candidate> {
  if (tree.length === 0) return generic;
  // Links are where escapes hide, so they are aimed at twice as often as other entries.
  const aims = fc.constantFrom(...tree.flatMap((entry) => (entry.kind === "symlink" ? [entry.at, entry.at] : [entry.at])));
  const middle = fc.oneof(
    { weight: 2, arbitrary: fc.constant([]) },
    { weight: 1, arbitrary: withClimbs(fc.array(plainSegment(), { maxLength: 2 }), { maxParentSteps: Math.min(2, maxParentSteps) }) },
  );
  const through = fc.tuple(aims, middle, leaf).map(([at, steps, end]) => [...at, ...steps, end]);
  // The entry itself (a dangling link to create through), and one step back out of it (`link/..`,
  // which the kernel takes from the link's target, not from the link).
  const exactly = aims.map((at) => [...at]);
  const backOut = fc.tuple(aims, leaf).map(([at, end]) => [...at, "..", end]);
  const aimed = fc
    .oneof({ weight: 2, arbitrary: through }, { weight: 1, arbitrary: exactly }, { weight: 1, arbitrary: backOut })
    .map((parts): Candidate => ({ form: "text", text: parts.join("/") }));
  return fc.oneof({ weight: 2, arbitrary: aimed }, { weight: 1, arbitrary: generic });
}

/**
 * The shape of most real escapes: one top-level link that leads out (to the outside canary or a
 * sibling: a directory, a file, or nothing yet), and a path that uses it.
 */
export function linkAttack(): fc.Arbitrary<{ link: TreeEntry; candidate: Candidate }> {
  return fc
    .record({
      name: treeName(),
      form: fc.constantFrom("absolute" as const, "relative" as const),
      area: neighbourArea(),
      path: fc.oneof(
        { weight: 2, arbitrary: fc.constantFrom([], [CANARY_DIR], ["planted.txt"]) },
        { weight: 1, arbitrary: fc.constantFrom([CANARY_FILE], [CANARY_DIR, CANARY_FILE], ["planted-dir"]) },
      ),
      rest: fc.oneof(
        { weight: 2, arbitrary: fc.constantFrom([], [CANARY_FILE], ["..", CANARY_FILE]) },
        { weight: 1, arbitrary: fc.constantFrom(["new.txt"], [CANARY_DIR, CANARY_FILE], ["new", "deeper", "x.txt"]) },
      ),
    })
    .map(({ name, form, area: where, path, rest }) => ({
      link: { kind: "symlink" as const, at: [name], target: { form, area: where, path } },
      candidate: { form: "text" as const, text: [name, ...rest].join("/") },
    }));
}

export interface Probe {
  candidate: Candidate;
  /** For a write (the path may not exist yet) rather than a read. */
  creating: boolean;
}

export interface ProbeConstraints extends TreeConstraints, AimConstraints {
  /** The attacks a tree may open with (default `linkAttackOpening()`: a link that leads out). */
  attack?: fc.Arbitrary<Attack>;
  /** One tree in `noAttackOneIn` opens with no attack (default 3); the others with one of `attack`. */
  noAttackOneIn?: number;
  /**
   * Attacks every tree opens with besides (openings.ts): each is laid out in every tree, and its aims
   * made first, so that the classes they stand for are met in every run, not when draws combine;
   * shrinking leaves out what a failure does not need.
   */
  openings?: readonly fc.Arbitrary<Attack>[];
  /**
   * The most drawn probes aimed at one tree besides its attacks' (default 64), drawn across the whole
   * range (about 30 on average): laying out a tree, resetting it and comparing its canaries costs as
   * much as dozens of probes, so one tree serves them all.
   */
  maxProbes?: number;
}

/**
 * A tree and probes aimed at it, each made by `probe` from the candidates aimed at the tree (through
 * its links, or anywhere `generic` aims) and from the tree itself. The tree opens with every one of
 * `openings` and, but for one tree in `noAttackOneIn`, with one drawn `attack`; the first probes are
 * made from their aims, in that order.
 */
export function treeAnd<P>(
  probe: (aimed: fc.Arbitrary<Candidate>, aim: Aim | undefined, tree: Tree) => fc.Arbitrary<P>,
  generic: fc.Arbitrary<Candidate>,
  constraints: ProbeConstraints = {},
): fc.Arbitrary<{ tree: Tree; probes: P[] }> {
  const { maxProbes = 64, attack: attacks = linkAttackOpening(), noAttackOneIn = 3, openings = [] } = constraints;
  // A stable chain: a shrink that leaves out an opening draws the probes again from where they were
  // first drawn, so the drawn ones stay as they were (droppable.ts).
  return stableChain(fc.tuple(allOf(openings), fc.option(attacks, { freq: noAttackOneIn }), fsTree(constraints)), ([opened, drawn, entries]) => {
      const attack = joinAttacks(drawn === null ? opened : [...opened, drawn]);
      const tree = [...attack.entries, ...entries];
      // The drawn probes aim through the drawn entries and name them only, and are drawn before the
      // attacks' probes: a shrink that drops an opening draws them again as they were, so a failure
      // they do not need loses the opening instead of the case.
      const drawnTree = [...(drawn?.entries ?? []), ...entries];
      const aimed = candidateThrough(drawnTree, generic, constraints);
      const drawnProbes = fc.array(probe(aimed, undefined, drawnTree), { maxLength: maxProbes, size: "max" });
      const first = attack.aims.map((aim) => probe(aimed, aim, tree));
      return fc.record({ tree: fc.constant(tree), probes: fc.tuple(drawnProbes, fc.tuple(...first)).map(([rest, head]) => [...head, ...rest]) });
  });
}

/** A tree and probes aimed at it, each for a read (`creating: false`) or a write. */
export function treeWithProbes(generic: fc.Arbitrary<Candidate>, constraints: ProbeConstraints = {}): fc.Arbitrary<{ tree: Tree; probes: Probe[] }> {
  return treeAnd((aimed, aim) => fc.record({ candidate: aim === undefined ? aimed : fc.constant(aim.candidate), creating: fc.boolean() }), generic, constraints);
}
