/**
 * The attacks every tree of a tool's property opens with (trees.ts, `treeAnd`'s `openings`), each a
 * class of input a drawn tree meets only when several draws combine:
 * - `optionSweep`: a link out, and the same path through it asked with each of the tool's optional
 *   arguments in turn (a check skipped behind `head`, `dryRun` or `mode` is met on its branch);
 * - `besideTheRoot`: a path out of the root into each of its twins and the outside canary, relative
 *   and absolute (`../ws-other/…`: a `startsWith(root)` or case-folding check lets one through);
 * - `twinAttack` (twins.ts): names and what a tool may rewrite them to, side by side;
 * - `specialFiles`: a FIFO, a socket and a character device, and links to them, as leaves a tool
 *   opens (a FIFO blocks an open until its other end is opened: a read or a write that does not
 *   refuse it hangs);
 * - `longPaths`: a chain of more links than the kernel follows, a name longer than NAME_MAX and a
 *   path longer than PATH_MAX, each made short again by `..` before a link out: a check whose
 *   resolution fails on them (ELOOP, ENAMETOOLONG) and falls back to reading the path as text
 *   answers inside;
 * - `loopThenOut`: a link loop followed by `..` into a link out, which a resolver that keeps the rest
 *   of a path as text after a loop takes for a path inside.
 *
 * Promises: every entry an opening lays out has a name of its own (no opening's names meet another's
 * or a drawn tree's), link texts climb at most two `..`, and no candidate climbs above the directory
 * it starts in (each `..` follows a name it leaves again); every opening is always laid out, and
 * shrinking drops what a failure does not need (droppable.ts).
 */
import fc from "fast-check";
import { CANARY_FILE, type SpecialKind } from "../../sandbox/sandbox.js";
import { MOST_NAMED_TWINS } from "../../sandbox/root-twins.js";
import type { Area, TreeEntry } from "../../sandbox/tree.js";
import { allOf, allOfItems } from "./droppable.js";
import { type Aim, type Attack, type Intent, aimsBelow, joinAttacks } from "./trees.js";
import { twinAttack } from "./twins.js";

/** How many variants of a tool's optional arguments the sweep asks: the first is none, each other one argument's value (classify.ts). */
export const OPTION_VARIANTS = 12;

/** Linux follows at most this many symlinks in one path resolution (MAXSYMLINKS); one more is ELOOP. */
export const MAX_SYMLINKS = 40;

/** Longer than Linux's PATH_MAX (4096), which the kernel refuses with ENAMETOOLONG. */
export const LONG_PATH_LENGTH = 4_200;

/** Longer than NAME_MAX (255), which the kernel refuses with ENAMETOOLONG wherever it meets the name. */
export const LONG_NAME_LENGTH = 300;

const link = (name: string, path: readonly string[] = []): TreeEntry => ({ kind: "symlink", at: [name], target: { form: "absolute", area: "outside", path } });

/** A link out, and every intent through it once per variant of the tool's optional arguments. */
export function optionSweep(intents: readonly Intent[]): fc.Arbitrary<Attack> {
  const name = "opt";
  const variants = Array.from({ length: OPTION_VARIANTS }, (_, variant) => aimsBelow(name, intents, variant));
  return allOfItems(variants).map((aims) => ({ entries: [link(name)], aims: aims.flat() }));
}

/**
 * A path out of the root into the outside canary and into each twin a root's name can have
 * (root-twins.ts), relative and absolute, as a probe names it for each intent; twins past the
 * root's own come round again, and their probes fold onto the earlier ones' calls.
 */
export function besideTheRoot(intents: readonly Intent[]): fc.Arbitrary<Attack> {
  const areas: readonly Area[] = ["outside", ...Array.from({ length: MOST_NAMED_TWINS }, (_, index): Area => `sibling${index}`)];
  const leafOf = ({ kind }: Intent) => (kind === "existing" ? CANARY_FILE : kind === "fresh" ? "new.txt" : "");
  // Both spellings: a tool may take only absolute paths, or resolve a relative one elsewhere.
  const beside = areas.map((area): Attack => ({
    entries: [],
    aims: intents.flatMap((intent) =>
      [
        { form: "beside" as const, area, detour: [], rest: leafOf(intent) },
        { form: "absolute" as const, area, rest: leafOf(intent) },
      ].map((candidate) => ({ candidate, ...(intent.end === undefined ? {} : { end: intent.end }) })),
    ),
  }));
  return allOf(beside.map((attack) => fc.constant(attack))).map(joinAttacks);
}

/** The special files, each laid out once and through a link, and what a probe names of them. */
export function specialFiles(intents: readonly Intent[]): fc.Arbitrary<Attack> {
  const kinds: readonly SpecialKind[] = ["fifo", "socket", "device"];
  const files = kinds.map((special): Attack => {
    const name = `special-${special}`;
    const linked = `to-${special}`;
    const entries: TreeEntry[] = [
      { kind: "special", at: [name], special },
      { kind: "symlink", at: [linked], target: { form: "relative", area: "root", path: [name] } },
    ];
    // A special file is opened as a file: an existing one to read, change or move; a directory's
    // listing or search meets it from the root.
    const aims = intents.flatMap(({ kind, end }): Aim[] =>
      kind === "directory" ? [{ candidate: { form: "text", text: "" } }] : kind === "existing" ? [name, linked].map((text) => ({ candidate: { form: "text", text }, ...(end === undefined ? {} : { end }) })) : [],
    );
    return { entries, aims };
  });
  return allOf(files.map((file) => fc.constant(file))).map(joinAttacks);
}

/**
 * A link `chain0` whose text takes one more link than the kernel follows (`hop/hop/…/hop`, where
 * `hop -> .`: each step is a link), and a link out `far`; aims that go through the chain and back
 * (`chain0/../far/…`: the kernel cannot resolve the chain, text drops it), and through `far` past a
 * name longer than NAME_MAX and back, and along a path longer than PATH_MAX that `x/..` steps make
 * short again.
 */
export function longPaths(intents: readonly Intent[]): fc.Arbitrary<Attack> {
  const far = "far";
  const chain: TreeEntry[] = [
    { kind: "symlink", at: ["hop"], target: { form: "text", text: "." } },
    { kind: "symlink", at: ["chain0"], target: { form: "text", text: Array<string>(MAX_SYMLINKS).fill("hop").join("/") } },
  ];
  const through = (prefix: string): Aim[] =>
    aimsBelow(far, intents).map((aim) => ({ ...aim, candidate: { form: "text", text: `${prefix}${aim.candidate.form === "text" ? aim.candidate.text : ""}` } }));
  const chained: Attack = { entries: [...chain, link(far)], aims: through("chain0/../") };
  // A name longer than NAME_MAX fails realpath itself; a path longer than PATH_MAX fails every call
  // that hands the kernel the whole path (lstat, open), though realpath walks it name by name.
  const detours = [`${"a".repeat(LONG_NAME_LENGTH)}/../`, "x/../".repeat(Math.ceil(LONG_PATH_LENGTH / "x/../".length))];
  const long: Attack = {
    entries: [link(far)],
    aims: detours.flatMap((detour) => aimsBelow(far, intents).map((aim) => ({ ...aim, candidate: { form: "text" as const, text: withDetour(aim, far, detour) } }))),
  };
  return allOf([fc.constant(chained), fc.constant(long)]).map(joinAttacks);
}

/** `far/x/../x/../…/leaf`: the aim's path with the detour after its first component. */
function withDetour(aim: Aim, first: string, detour: string): string {
  const text = aim.candidate.form === "text" ? aim.candidate.text : first;
  return `${first}/${detour}${text.slice(first.length + 1) || "."}`;
}

/**
 * A link loop followed by `..` into a link out: `loop -> loop`, `lo -> ../outside` and
 * `esc -> loop/../lo`, and aims through `esc`. The kernel refuses `esc/…` (ELOOP); a resolver that
 * gives up at a loop and keeps the rest as text (Python's `os.path.realpath` without `strict=True`)
 * answers `<root>/loop/../lo/…`, which is `<root>/lo/…` once normalized: inside by its text, outside
 * through `lo`.
 */
export function loopThenOut(intents: readonly Intent[]): fc.Arbitrary<Attack> {
  const entries: TreeEntry[] = [
    { kind: "symlink", at: ["loop"], target: { form: "text", text: "loop" } },
    { kind: "symlink", at: ["lo"], target: { form: "relative", area: "outside", path: [] } },
    { kind: "symlink", at: ["esc"], target: { form: "text", text: "loop/../lo" } },
  ];
  return fc.constant({ entries, aims: aimsBelow("esc", intents) });
}

export interface OpeningConstraints {
  /** What the operation's probes name (trees.ts, `Intent`). */
  intents: readonly Intent[];
  /** Whether the operation may change the workspace (twins.ts: no `~` twin then). */
  changes: boolean;
  /** Whether the operation puts a file at a new name (twins.ts: leaf pairs at its new names then). */
  fillsNewNames?: boolean;
}

/** Every opening, in the order their probes come: the option sweep, the root's neighbours, the name twins, the special files, the long paths, the loop with a rest. */
export function openings(constraints: OpeningConstraints): fc.Arbitrary<Attack>[] {
  return [
    optionSweep(constraints.intents),
    besideTheRoot(constraints.intents),
    twinAttack(constraints),
    specialFiles(constraints.intents),
    longPaths(constraints.intents),
    loopThenOut(constraints.intents),
  ];
}
