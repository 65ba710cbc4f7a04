/**
 * Archives the audit builds for a tool that extracts them: one class of hostile entries an archive
 * (an extractor that stops at the first bad entry would never meet the classes after it), beside
 * safe entries a correct extractor has work with, each entry taken away by shrinking when a failure
 * does not need it (a counterexample keeps the one bad entry, or the link and the entry written
 * through it).
 *
 * Promises: every archive holds, in order, the safe entries and then those of one class of `ARCHIVE_ATTACKS`;
 * a name or link target climbs at most `ENTRY_CLIMBS` directories, and an absolute one names a place
 * under `$BOX` (the sandbox's directory, which `entriesIn` puts in), so an extractor that follows
 * every entry, from a destination at most two directories above the root, still lands inside the
 * sandbox's guard directories, where the canaries see it. Names are ASCII.
 * Does not promise: zip archives, compressed ones, or devices and FIFOs among the entries (docs/limits.md).
 */
import fc from "fast-check";
import type { TarEntry } from "../../sandbox/tar.js";
import { allOf } from "./droppable.js";

/** The `..` an entry climbs: from a destination one directory below the root, out to the root's parent. */
export const ENTRY_CLIMBS = 2;

/** How an entry names the sandbox's directory, as counterexamples do; `entriesIn` writes the real one. */
export const BOX = "$BOX";

const up = "../".repeat(ENTRY_CLIMBS);

/** What every file entry holds: a counterexample names the entries, and this is what they carry. */
export const ENTRY_CONTENT = "written by an archive the audit built\n";

/** Safe entries: a directory, a file in it, a file at the top, and a link that stays inside. */
const SAFE: readonly TarEntry[] = [
  { kind: "directory", name: "docs" },
  { kind: "file", name: "docs/readme.txt", content: ENTRY_CONTENT },
  { kind: "file", name: "notes.txt", content: ENTRY_CONTENT },
  { kind: "symlink", name: "docs/latest", target: "readme.txt" },
];

/** A place outside the destination, as a climbing or an absolute text: an outside canary or a new name beside it. */
const outsideTarget = (leaf: fc.Arbitrary<string>) =>
  fc.tuple(fc.constantFrom(up, `${BOX}/`), leaf).map(([start, rest]) => `${start}${rest}`);
const newOutside = fc.constantFrom("outside/slipped.txt", "slipped.txt");
const canary = fc.constantFrom("outside/secret.txt", "outside/dir/secret.txt");

/** Each class of hostile entries, by what a report calls it. */
export const ARCHIVE_ATTACKS = {
  /** A name that climbs out of the destination: tar slip. */
  climb: fc.oneof(newOutside, canary).map((rest): TarEntry[] => [{ kind: "file", name: `${up}${rest}`, content: ENTRY_CONTENT }]),
  /** An absolute name. */
  absolute: fc.oneof(newOutside, canary).map((rest): TarEntry[] => [{ kind: "file", name: `${BOX}/${rest}`, content: ENTRY_CONTENT }]),
  /** A link to a directory outside, then an entry written through it. */
  linkThenThrough: outsideTarget(fc.constant("outside")).chain((target) =>
    allOf<TarEntry>([fc.constant({ kind: "symlink", name: "lnk", target }), fc.constantFrom<TarEntry>({ kind: "file", name: "lnk/slipped.txt", content: ENTRY_CONTENT }, { kind: "file", name: "lnk/secret.txt", content: ENTRY_CONTENT })]),
  ),
  /** A link to a file outside, then a file of the same name. */
  linkThenFile: outsideTarget(canary).chain((target) => allOf<TarEntry>([fc.constant({ kind: "symlink", name: "leaf.txt", target }), fc.constant({ kind: "file", name: "leaf.txt", content: ENTRY_CONTENT })])),
  /** A hard link to a file outside, then a file of the same name written into it. */
  hardLink: outsideTarget(canary).chain((target) => allOf<TarEntry>([fc.constant({ kind: "hardlink", name: "hard.txt", target }), fc.constant({ kind: "file", name: "hard.txt", content: ENTRY_CONTENT })])),
  /** A link to a directory outside, then a directory entry of the same name, and a file in it. */
  directoryLink: outsideTarget(fc.constant("outside/dir")).chain((target) =>
    allOf<TarEntry>([fc.constant({ kind: "symlink", name: "sub", target }), fc.constant({ kind: "directory", name: "sub" }), fc.constant({ kind: "file", name: "sub/slipped.txt", content: ENTRY_CONTENT })]),
  ),
} as const satisfies Record<string, fc.Arbitrary<TarEntry[]>>;

/** The entries of one archive: the safe ones, then those of one hostile class, each droppable. */
export function archiveEntries(attack: fc.Arbitrary<TarEntry[]>): fc.Arbitrary<TarEntry[]> {
  return allOf<TarEntry[]>([allOf(SAFE.map((entry) => fc.constant(entry))), attack]).map((parts) => parts.flat());
}

/** The entries as written into the sandbox whose directory is `box`: `$BOX` in a name or a target made real. */
export function entriesIn(entries: readonly TarEntry[], box: string): TarEntry[] {
  const real = (text: string) => (text.startsWith(`${BOX}/`) ? `${box}${text.slice(BOX.length)}` : text);
  return entries.map((entry) => ({ ...entry, name: real(entry.name), ...(entry.kind === "symlink" || entry.kind === "hardlink" ? { target: real(entry.target) } : {}) }));
}

/** An entry as a counterexample shows it: `file ../../outside/slipped.txt`, `symlink lnk -> ../../outside`, `hardlink hard.txt => …`. */
export function entryText(entry: TarEntry): string {
  if (entry.kind === "symlink") return `symlink ${entry.name} -> ${entry.target}`;
  if (entry.kind === "hardlink") return `hardlink ${entry.name} => ${entry.target}`;
  return `${entry.kind} ${entry.name}`;
}

/** The entry `entryText` showed, a file holding `ENTRY_CONTENT`; undefined for any other text. */
export function entryOfText(text: string): TarEntry | undefined {
  const [, kind, name = "", arrow, target = ""] = /^(file|directory|symlink|hardlink) (.+?)(?: (->|=>) (.+))?$/.exec(text) ?? [];
  if (kind === "file" || kind === "directory") return arrow === undefined ? (kind === "file" ? { kind, name, content: ENTRY_CONTENT } : { kind, name }) : undefined;
  if ((kind === "symlink" && arrow === "->") || (kind === "hardlink" && arrow === "=>")) return { kind, name, target };
  return undefined;
}
