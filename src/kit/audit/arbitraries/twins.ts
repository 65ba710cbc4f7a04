/**
 * Names a tool may rewrite between its check and its use, laid out side by side with what they are
 * rewritten to: a name with trailing or leading whitespace (trimmed), in quotes (stripped), in capitals
 * (case folded), in one Unicode normalization form (normalized to the other), percent-encoded
 * (decoded), holding `%2F` or a backslash (decoded, or taken as a separator, into two components),
 * `~` (expanded to the home directory), and in fullwidth compatibility forms (`ｔｗ１１`, a fullwidth
 * solidus `／`, fullwidth full stops `．．`: NFKC folds them to ASCII, a separator, a parent step). A
 * tool that checks the name it was given and then uses the rewritten one, or checks the rewritten one
 * and uses the name, reaches whichever of the two leads out.
 *
 * Promises: `twinAttack` lays out, for every rewrite and both orientations, the name and its rewrite,
 * one of them a link to the outside canary and the other a directory inside holding the canary's own
 * names (so a check of it passes), and aims at the name that is not rewritten; the same at the leaf
 * (a file, and a link to the canary's file: `twinLeafPair`), where a tool that rewrites the whole path
 * meets it; the same at the leaf of each new name an operation puts a file at (a write's new file, a
 * move's or a copy's destination: one name not laid out, the other a link dangling to a new name
 * outside: `twinNewLeafPair`); and `．．/outside/…` through a directory `．．` holding the canary's names
 * (`fullwidthClimb`). Every pair is always there and shrinking drops the pairs a failure does not need (droppable.ts). Names are distinct per
 * pair, so pairs never overlap. The `~` twin is laid out for reads only: its rewrite is the home
 * directory, which the audit points at the outside canary in process (the case's `HOME`) and at a
 * home of the sandbox's holding a canary in a server it starts (mcp/target.ts), whose changes no
 * canary comparison watches.
 * Does not promise: every rewrite real code makes; these are the ones found in shipped path checks.
 * Nor, at a new name's leaf, a move that renames onto the rewritten name (a rename replaces a link
 * there, never follows it: only a move that copies or writes through it is met) or one that moves
 * into a directory the rewritten name leads to; nor a mkdir (the kernel makes no directory through a
 * link at its leaf).
 */
import fc from "fast-check";
import { CANARY_DIR, CANARY_FILE } from "../../sandbox/sandbox.js";
import type { TreeEntry } from "../../sandbox/tree.js";
import { allOf } from "./droppable.js";
import { type Aim, type Attack, type Intent, aimsBelow, joinAttacks } from "./trees.js";

/** A rewrite a tool may apply to a name after its check: how the name is spelled that it rewrites to `base`. */
export interface NameRewrite {
  rewrite: string;
  /** The name that the rewrite turns into `base`. */
  spell: (base: string) => string;
  /** Where the rewrite turns one name into two components (`a%2Fb`, `a\b`), the text between them. */
  joins?: string;
  /** The name it is rewritten from is the home directory (`~`), which only a read may be aimed at. */
  home?: true;
}

const percentEncoded = (text: string) => `%${(text.codePointAt(0) as number).toString(16).toUpperCase()}${text.slice(1)}`;

/** ASCII spelled in its fullwidth compatibility forms (`tw11` as `ｔｗ１１`), which NFKC folds back. */
export const fullwidth = (text: string): string => text.replace(/[!-~]/g, (char) => String.fromCodePoint((char.codePointAt(0) as number) + 0xfee0));

/** Every rewrite, each with the name it rewrites: the class of names a tool may change after its check. */
export const NAME_REWRITES: readonly NameRewrite[] = [
  { rewrite: "trailing whitespace trimmed", spell: (base) => `${base} ` },
  { rewrite: "leading whitespace trimmed", spell: (base) => ` ${base}` },
  { rewrite: "single quotes stripped", spell: (base) => `'${base}'` },
  { rewrite: "double quotes stripped", spell: (base) => `"${base}"` },
  { rewrite: "letter case folded", spell: (base) => base.toUpperCase() },
  { rewrite: "normalized to NFC", spell: (base) => base.normalize("NFD") },
  { rewrite: "normalized to NFD", spell: (base) => base.normalize("NFC") },
  { rewrite: "percent-decoded", spell: percentEncoded },
  { rewrite: "an encoded slash decoded", spell: (base) => base, joins: "%2F" },
  { rewrite: "backslashes taken as separators", spell: (base) => base, joins: "\\" },
  { rewrite: "~ expanded to the home directory", spell: () => "~", home: true },
  { rewrite: "compatibility forms folded (NFKC)", spell: fullwidth },
  { rewrite: "a fullwidth solidus folded to a separator (NFKC)", spell: (base) => base, joins: "\uff0f" },
];

/**
 * The name each rewrite turns its twin into: distinct per rewrite (so pairs never share a name), with
 * an accented letter where the rewrite is a normalization, in the form that rewrite produces.
 */
export function twinBase(index: number): string {
  const { rewrite } = NAME_REWRITES[index] as NameRewrite;
  if (rewrite === "normalized to NFC") return `tw\u00e9${index}`;
  if (rewrite === "normalized to NFD") return `twe\u0301${index}`;
  return `tw${index}`;
}

/** Which of the two a tool must never reach: the rewritten name (checked as given, used rewritten), or the name (checked rewritten, used as given). */
export type TwinOrientation = "rewritten leads out" | "name leads out";

const outside = (at: readonly string[], path: readonly string[] = []): TreeEntry => ({ kind: "symlink", at, target: { form: "absolute", area: "outside", path } });

/** A directory inside that holds the canary's names a probe names: a check of a path into it passes. */
const decoy = (at: readonly string[], intents: readonly Intent[]): TreeEntry[] => [
  { kind: "dir", at },
  ...(intents.some((intent) => intent.kind === "existing") ? [{ kind: "file" as const, at: [...at, CANARY_FILE] }] : []),
  ...(intents.some((intent) => intent.kind === "directory") ? [{ kind: "dir" as const, at: [...at, CANARY_DIR] }] : []),
];

/** The pair of one rewrite in one orientation, and the aims at the name that is not rewritten. */
export function twinPair(index: number, orientation: TwinOrientation, intents: readonly Intent[]): Attack {
  const rewrite = NAME_REWRITES[index] as NameRewrite;
  const base = twinBase(index);
  // An orientation's names must differ from the other's: the second is the first with a trailing `x`.
  const rewritten = orientation === "rewritten leads out" ? base : `${base}x`;
  if (rewrite.joins === undefined) {
    const name = rewrite.home === true ? "~" : rewrite.spell(rewritten);
    const entries = orientation === "rewritten leads out" ? [...decoy([name], intents), ...(rewrite.home === true ? [] : [outside([rewritten])])] : [outside([name]), ...decoy([rewritten], intents)];
    return { entries, aims: aimsBelow(name, intents) };
  }
  // One component that the rewrite splits in two: `tw9%2Fsecret.txt` becomes `tw9/secret.txt`.
  const joined = (leaf: string) => `${rewritten}${rewrite.joins}${leaf}`;
  const aims: Aim[] = aimsBelow(rewritten, intents).map((aim) => ({ ...aim, candidate: { form: "text", text: joinedText(aim, rewritten, joined) } }));
  // Only what the aims name is laid out: the canary file, a new name, the canary directory.
  const named = intents.map(({ kind }) => (kind === "existing" ? CANARY_FILE : kind === "fresh" ? "new.txt" : CANARY_DIR));
  if (orientation === "rewritten leads out")
    return { entries: [outside([rewritten]), ...named.flatMap((leaf): TreeEntry[] => (leaf === CANARY_FILE ? [{ kind: "file", at: [joined(leaf)] }] : leaf === CANARY_DIR ? [{ kind: "dir", at: [joined(leaf)] }] : []))], aims };
  return { entries: [...decoy([rewritten], intents), ...named.map((leaf) => outside([joined(leaf)], [leaf]))], aims };
}

/**
 * The pair of one rewrite in one orientation at the leaf: the name a file inside, its rewrite a link
 * to the outside canary's file (or the other way round), and the aims at the name itself. A tool that
 * rewrites the whole path after its check (`"ls "` checked, `"ls"` edited) meets a rewrite only there.
 */
export function twinLeafPair(index: number, orientation: TwinOrientation, intents: readonly Intent[]): Attack {
  const rewrite = NAME_REWRITES[index] as NameRewrite;
  const rewritten = `${twinBase(index)}${orientation === "rewritten leads out" ? "f" : "fx"}`;
  const name = rewrite.spell(rewritten);
  const file = (at: string): TreeEntry => ({ kind: "file", at: [at] });
  const entries = orientation === "rewritten leads out" ? [file(name), outside([rewritten], [CANARY_FILE])] : [outside([name], [CANARY_FILE]), file(rewritten)];
  const aims = intents.flatMap(({ kind, end }): Aim[] => (kind === "existing" ? [{ candidate: { form: "text", text: name }, ...(end === undefined ? {} : { end }) }] : []));
  return { entries, aims };
}

/**
 * The pair of one rewrite in one orientation at the leaf of a new name: the name not laid out and its
 * rewrite a link to a new name outside (or the name that link and its rewrite not laid out), and the
 * aims at the name for each new name the operation makes (a copy's or a move's destination, a
 * write's new file). A tool that checks a new name as given and makes it rewritten (`"tw0n "`
 * checked, a new name inside; `tw0n` copied onto) writes through the link. The link dangles: a tool
 * that refuses an existing destination by following it (`existsSync`) goes on through it too, and
 * what it makes outside the canaries' comparison sees.
 */
export function twinNewLeafPair(index: number, orientation: TwinOrientation, intents: readonly Intent[]): Attack {
  const rewrite = NAME_REWRITES[index] as NameRewrite;
  const rewritten = `${twinBase(index)}${orientation === "rewritten leads out" ? "n" : "nx"}`;
  const name = rewrite.spell(rewritten);
  const link = outside([orientation === "rewritten leads out" ? rewritten : name], [`${rewritten}.txt`]);
  const aims = intents.flatMap(({ kind, end }): Aim[] => (kind === "fresh" ? [{ candidate: { form: "text", text: name }, ...(end === undefined ? {} : { end }) }] : []));
  return { entries: [link], aims };
}

/** The two fullwidth full stops `．．`, which NFKC folds to `..`: a directory of that name inside, holding the outside canary's names, and the aims through it. */
export const FULLWIDTH_PARENT = fullwidth("..");

/** A climb spelled in compatibility forms: `．．/outside/secret.txt` is checked inside, and folded it is the outside canary. */
export function fullwidthClimb(intents: readonly Intent[]): Attack {
  return { entries: [{ kind: "dir", at: [FULLWIDTH_PARENT] }, ...decoy([FULLWIDTH_PARENT, "outside"], intents)], aims: aimsBelow(`${FULLWIDTH_PARENT}/outside`, intents) };
}

/** An aim below `place` (`place/leaf`, or `place` itself) as the one component the rewrite splits. */
function joinedText(aim: Aim, place: string, joined: (leaf: string) => string): string {
  const text = aim.candidate.form === "text" ? aim.candidate.text : "";
  return text === place ? joined(CANARY_DIR) : joined(text.slice(place.length + 1));
}

export interface TwinConstraints {
  /** What the probes name through each twin (trees.ts, `Intent`). */
  intents: readonly Intent[];
  /** The operation may change the workspace: no `~` twin, which another process would take to the user's home. */
  changes: boolean;
  /**
   * The operation puts a file at the new name it is given (a write, a copy, a move, a tool attacked
   * generically): its new names get leaf pairs too (`twinNewLeafPair`). A directory is never made
   * through a link at its leaf (mkdir answers EEXIST, or ENOENT when it dangles), so a mkdir needs none.
   */
  fillsNewNames?: boolean;
}

/**
 * Every rewrite's pair in both orientations, below the name and at the leaf of a file that exists and
 * of a new name the operation fills (but for a rewrite that splits a name or expands `~`), and the
 * fullwidth climb; each dropped by shrinking when a failure does not need it.
 */
export function twinAttack({ intents, changes, fillsNewNames = false }: TwinConstraints): fc.Arbitrary<Attack> {
  const orientations = ["rewritten leads out", "name leads out"] as const;
  const pairs = NAME_REWRITES.flatMap((rewrite, index) =>
    rewrite.home === true ? (changes ? [] : [twinPair(index, "rewritten leads out", intents)]) : orientations.map((orientation) => twinPair(index, orientation, intents)),
  );
  const leaves = NAME_REWRITES.flatMap((rewrite, index) =>
    rewrite.home === true || rewrite.joins !== undefined || !intents.some((intent) => intent.kind === "existing") ? [] : orientations.map((orientation) => twinLeafPair(index, orientation, intents)),
  );
  const newLeaves = NAME_REWRITES.flatMap((rewrite, index) =>
    !fillsNewNames || rewrite.home === true || rewrite.joins !== undefined || !intents.some((intent) => intent.kind === "fresh") ? [] : orientations.map((orientation) => twinNewLeafPair(index, orientation, intents)),
  );
  return allOf([...pairs, ...leaves, ...newLeaves, fullwidthClimb(intents)].map((pair) => fc.constant(pair))).map(joinAttacks);
}
