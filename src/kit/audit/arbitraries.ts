/**
 * fast-check arbitraries for attacking a workspace boundary, small and composable, exported as
 * `workspace-gates/arbitraries` for other suites.
 *
 * Candidates and link targets are symbolic (an area of the sandbox plus components) and become text
 * only against a concrete sandbox (`candidateText`, `linkText`), so a shrunk counterexample reads the
 * same on every machine.
 *
 * Promises: no candidate carries more than `MAX_PARENT_STEPS` `..` components and no link text more
 * than two, so even a broken implementation that opens raw paths stays inside the sandbox's guard
 * directories (see sandbox.ts). Windows forms are generated as text; on POSIX they are plain names.
 * Does not promise: coverage of every path the kernel accepts. Names come from small alphabets so that
 * candidates meet the generated tree often.
 */
import fc from "fast-check";
import { join } from "node:path";
import { type Sandbox, SIMILAR_PREFIX_SUFFIXES } from "../sandbox/sandbox.js";
import type { Area, LinkTarget, Tree, TreeEntry } from "../sandbox/tree.js";

export const MAX_PARENT_STEPS = 3;

/** Names used to build trees, including one that only looks like a parent step. */
export const TREE_NAMES = ["a", "b", "c", "..foo"] as const;

export const treeName = fc.constantFrom(...TREE_NAMES);

/** Names that break naive string handling: dots, spaces, quotes, unicode, backslashes, shell syntax. */
export const trickyName = fc.constantFrom("..foo", "...", "a b", "it's", '"q"', "é", "日本", "back\\slash", "-rf", "$HOME", "~", ".hidden", " ");

/** Names of things beside the workspace, so `..` steps can land on a canary or a sibling. */
export const neighbourName = fc.constantFrom(
  "outside",
  "secret.txt",
  "dir",
  "new.txt",
  "ws",
  ...SIMILAR_PREFIX_SUFFIXES.map((suffix) => `ws${suffix}`),
);

export const pathSegment = fc.oneof(
  { weight: 4, arbitrary: treeName },
  { weight: 2, arbitrary: fc.constantFrom("..", ".", "") },
  { weight: 2, arbitrary: neighbourName },
  { weight: 1, arbitrary: trickyName },
);

const parentSteps = (parts: readonly string[]) => parts.filter((part) => part === "..").length;

/** What a path most often ends in: a canary's secret, a tree name, a new file. */
export const leafName = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("secret.txt", "dir/secret.txt") },
  { weight: 3, arbitrary: treeName },
  { weight: 1, arbitrary: fc.constantFrom("new.txt", "") },
);

/** Relative candidates like `a/../../ws-other/secret.txt`, at most `MAX_PARENT_STEPS` `..`. */
export const relativeCandidate = fc
  .tuple(fc.array(pathSegment, { maxLength: 5 }), leafName)
  .map(([parts, leaf]) => [...parts, leaf])
  .filter((parts) => parentSteps(parts) <= MAX_PARENT_STEPS)
  .map((parts) => parts.join("/"));

/** The direct attacks on a neighbour: `../outside/secret.txt`, `../ws-other/secret.txt`, … */
export const neighbourCandidate = fc
  .tuple(fc.constantFrom("outside", "outside/dir", ...SIMILAR_PREFIX_SUFFIXES.map((suffix) => `ws${suffix}`)), fc.constantFrom("secret.txt", "new.txt", ""))
  .map(([neighbour, leaf]) => `../${neighbour}/${leaf}`);

export const area: fc.Arbitrary<Area> = fc.oneof(
  { weight: 2, arbitrary: fc.constant("root" as const) },
  { weight: 2, arbitrary: fc.constant("outside" as const) },
  { weight: 2, arbitrary: fc.constantFrom(...SIMILAR_PREFIX_SUFFIXES.map((_suffix, index) => `sibling${index}` as Area)) },
);

export type Candidate = { form: "text"; text: string } | { form: "absolute"; area: Area; rest: string };

/** Absolute candidates into the workspace, the outside canary or a similar-prefix sibling. */
export const absoluteCandidate: fc.Arbitrary<Candidate> = fc.record({
  form: fc.constant("absolute" as const),
  area,
  rest: fc.oneof(fc.constantFrom("", "secret.txt", "new.txt"), relativeCandidate),
});

/** Windows spellings: separators, drives, drive-relative, UNC and device prefixes, at most two `..`. */
export const windowsCandidate = fc.oneof(
  fc.constantFrom(
    "..\\outside\\secret.txt",
    "..\\ws-other\\secret.txt",
    "a\\..\\..\\outside\\secret.txt",
    "..\\../outside/secret.txt",
    "C:\\Windows\\win.ini",
    "D:\\x",
    "C:foo",
    "c:/x",
    "\\\\server\\share\\x",
    "\\\\?\\C:\\x",
    "\\\\.\\C:\\x",
    "\\\\?\\UNC\\server\\share\\x",
    "\\",
    "WS\\A",
  ),
  fc.array(fc.oneof(treeName, fc.constantFrom("..", ".")), { minLength: 1, maxLength: 4 })
    .filter((parts) => parentSteps(parts) <= 2)
    .chain((parts) => fc.constantFrom(parts.join("\\"), parts.join("/"), parts.map((p, i) => (i % 2 ? `\\${p}` : `/${p}`)).join("").slice(1))),
);

/**
 * NUL bytes before, inside and after names, and in front of a climb out (Node refuses NUL in paths; a
 * fork that checks up to the NUL and opens the rest, or strips it after the check, is caught here).
 */
export const nulCandidate = fc.oneof(
  fc.constantFrom("\0", "a\0", "a\0b", "x.txt\0.png"),
  fc
    .tuple(treeName, neighbourCandidate)
    .map(([name, escape]) => `${name}\0/../${escape}`)
    .filter((text) => parentSteps(text.split("/")) <= MAX_PARENT_STEPS),
);

/** Components over NAME_MAX and paths over PATH_MAX. */
export const longCandidate = fc.oneof(
  fc.integer({ min: 250, max: 300 }).map((length) => "a".repeat(length)),
  fc.integer({ min: 1_100, max: 1_500 }).map((count) => Array<string>(count).fill("abc").join("/")),
);

export const textCandidate = fc.oneof(
  { weight: 6, arbitrary: relativeCandidate },
  { weight: 2, arbitrary: neighbourCandidate },
  { weight: 2, arbitrary: windowsCandidate },
  { weight: 3, arbitrary: nulCandidate },
  { weight: 1, arbitrary: longCandidate },
);

/** Every kind of candidate: relative, absolute into any area, Windows, NUL, long. */
export const candidate: fc.Arbitrary<Candidate> = fc.oneof(
  { weight: 3, arbitrary: textCandidate.map((text) => ({ form: "text" as const, text })) },
  { weight: 1, arbitrary: absoluteCandidate },
);

/** Candidates the precision oracle can model: no NUL, no over-long names. */
export const modelledCandidate: fc.Arbitrary<Candidate> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .oneof({ weight: 6, arbitrary: relativeCandidate }, { weight: 2, arbitrary: neighbourCandidate }, { weight: 1, arbitrary: windowsCandidate })
      .map((text) => ({ form: "text" as const, text })),
  },
  { weight: 1, arbitrary: absoluteCandidate },
);

export function candidateText(box: Sandbox, candidate: Candidate): string {
  if (candidate.form === "text") return candidate.text;
  const base = areaBase(box, candidate.area);
  return candidate.rest === "" ? base : `${base}/${candidate.rest}`;
}

function areaBase(box: Sandbox, target: Area): string {
  if (target === "root") return box.root;
  if (target === "outside") return box.outside;
  return box.siblings[Number(target.slice("sibling".length))] ?? join(box.root, "..", "missing-sibling");
}

/** Mostly top-level names, so that entries find their parent; sometimes two or three deep. */
export const treePath = fc.oneof(
  { weight: 3, arbitrary: treeName.map((name) => [name]) },
  { weight: 1, arbitrary: fc.array(treeName, { minLength: 2, maxLength: 3 }) },
);

/** Link targets: into the workspace, out of it, into a sibling, or texts such as `..` and self loops. */
export const linkTarget: fc.Arbitrary<LinkTarget> = fc.oneof(
  fc.record({
    form: fc.constantFrom("absolute" as const, "relative" as const),
    area,
    path: fc.oneof(
      { weight: 2, arbitrary: fc.constant([]) },
      { weight: 1, arbitrary: fc.array(fc.oneof(treeName, fc.constantFrom("dir", "secret.txt")), { minLength: 1, maxLength: 2 }) },
    ),
  }),
  fc.record({
    form: fc.constant("text" as const),
    // No text climbs through another link before its `..` (like `b/../..`): climbs would compound
    // along a chain and could leave the sandbox's guard directories.
    text: fc.constantFrom(".", "..", "../", "../..", "./", "a", "b", "./a", "a/b", "..foo", "../ws-other", "../outside/dir"),
  }),
);

export const treeEntry: fc.Arbitrary<TreeEntry> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("dir" as const), at: treePath }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("file" as const), at: treePath }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("symlink" as const), at: treePath, target: linkTarget }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("hardlink" as const),
      at: treePath,
      to: fc.record({ area: fc.constant("root" as const), path: treePath }),
    }),
  },
);

/** Trees of directories, files, symlinks (chains, loops, dangling) and hardlinks between workspace files. */
export const fsTree: fc.Arbitrary<Tree> = fc.array(treeEntry, { maxLength: 10 });

/** A hardlink inside the workspace to the outside canary's secret: the known limit of every path check. */
export const hardlinkToOutside: fc.Arbitrary<TreeEntry> = fc.record({
  kind: fc.constant("hardlink" as const),
  at: treePath,
  to: fc.constant({ area: "outside" as const }),
});

/** Candidates that walk into the tree's own entries, then on: `link/secret.txt`, `a/l/../x`, … */
export function candidateThrough(tree: Tree, generic: fc.Arbitrary<Candidate>): fc.Arbitrary<Candidate> {
  if (tree.length === 0) return generic;
  // Links are where escapes hide, so they are aimed at twice as often as other entries.
  const aims = fc.constantFrom(...tree.flatMap((entry) => (entry.kind === "symlink" ? [entry.at, entry.at] : [entry.at])));
  const through = fc
    .tuple(
      aims,
      fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(pathSegment, { minLength: 1, maxLength: 2 }) }),
      leafName,
    )
    .map(([at, middle, leaf]) => [...at, ...middle, leaf])
    .filter((parts) => parentSteps(parts) <= MAX_PARENT_STEPS);
  // The entry itself (a dangling link to create through), and one step back out of it (`link/..`,
  // which the kernel takes from the link's target, not from the link).
  const exactly = aims.map((at) => [...at]);
  const backOut = fc.tuple(aims, leafName).map(([at, leaf]) => [...at, "..", leaf]).filter((parts) => parentSteps(parts) <= MAX_PARENT_STEPS);
  const aimed = fc
    .oneof({ weight: 2, arbitrary: through }, { weight: 1, arbitrary: exactly }, { weight: 1, arbitrary: backOut })
    .map((parts): Candidate => ({ form: "text", text: parts.join("/") }));
  return fc.oneof({ weight: 2, arbitrary: aimed }, { weight: 1, arbitrary: generic });
}

/**
 * The shape of most real escapes: one top-level link that leads out (to the outside canary or a
 * similar-prefix sibling: a directory, a file, or nothing yet), and a path that uses it.
 */
export const linkAttack: fc.Arbitrary<{ link: TreeEntry; candidate: Candidate }> = fc
  .record({
    name: treeName,
    form: fc.constantFrom("absolute" as const, "relative" as const),
    area: fc.oneof(fc.constant("outside" as const), area.filter((where) => where !== "root")),
    path: fc.oneof(
      { weight: 2, arbitrary: fc.constantFrom([], ["dir"], ["planted.txt"]) },
      { weight: 1, arbitrary: fc.constantFrom(["secret.txt"], ["dir", "secret.txt"], ["planted-dir"]) },
    ),
    rest: fc.oneof(
      { weight: 2, arbitrary: fc.constantFrom([], ["secret.txt"], ["..", "secret.txt"]) },
      { weight: 1, arbitrary: fc.constantFrom(["new.txt"], ["dir", "secret.txt"], ["new", "deeper", "x.txt"]) },
    ),
  })
  .map(({ name, form, area: where, path, rest }) => ({
    link: { kind: "symlink" as const, at: [name], target: { form, area: where, path } },
    candidate: { form: "text" as const, text: [name, ...rest].join("/") },
  }));

/** A tree and a candidate aimed at it, for a read (`creating: false`) or a write. */
export function treeWithCandidate(generic: fc.Arbitrary<Candidate>) {
  const aimedAtTree = fsTree.chain((tree) => fc.record({ tree: fc.constant(tree), candidate: candidateThrough(tree, generic) }));
  const throughLink = fc.tuple(linkAttack, fsTree).map(([{ link, candidate: aimed }, tree]) => ({ tree: [link, ...tree], candidate: aimed }));
  return fc
    .tuple(fc.oneof({ weight: 3, arbitrary: aimedAtTree }, { weight: 1, arbitrary: throughLink }), fc.boolean())
    .map(([aimed, creating]) => ({ ...aimed, creating }));
}
