/**
 * What a recursive walk meets only below the top of the workspace: a directory `deep/in/` holding a
 * link out to the outside canary's directory, one to its secret file, a dangling link out, and a FIFO,
 * beside a plain file. The workspace's other links out sit at its top, where a tool that copies,
 * deletes, lists or searches a directory recursively never looks through them: `copy` with
 * `recursive: true` that copies a link's target, or a recursive `delete` that follows a link to a
 * directory, reaches outside only from inside what it walks.
 *
 * Promises: `deepTree` lays out every piece in every tree it opens, and its aims name `deep` (the
 * directory walked, copied or removed; a copy's destination is drawn) for every intent but a new
 * name's, once per variant of the tool's optional arguments (a walk often needs `recursive: true`;
 * variants past a tool's own fold onto earlier calls); shrinking drops the pieces, and
 * the whole opening, that a failure does not need (droppable.ts). Names are its own: no other
 * opening's or drawn tree's meets them (drawn names are `a`, `b`, `c`, `..foo`).
 * Does not promise: the depth of every walk; two levels is where a walk first leaves the top.
 */
import fc from "fast-check";
import { CANARY_FILE } from "../../sandbox/sandbox.js";
import type { TreeEntry } from "../../sandbox/tree.js";
import { allOfItems } from "./droppable.js";
import { OPTION_VARIANTS } from "./openings.js";
import type { Aim, Attack, Intent } from "./trees.js";

/** The directory a walk is aimed at, and the directory inside it that holds what leads out. */
export const DEEP_DIRECTORY = "deep";
const INNER = [DEEP_DIRECTORY, "in"];

const out = (name: string, path: readonly string[]): TreeEntry => ({ kind: "symlink", at: [...INNER, name], target: { form: "absolute", area: "outside", path } });

/** The pieces inside `deep/in/`, each of which a shrink may drop. */
const PIECES: readonly TreeEntry[] = [
  out("out", []),
  out("secret", [CANARY_FILE]),
  out("gone", ["missing.txt"]),
  { kind: "special", at: [...INNER, "fifo"], special: "fifo" },
];

/** The nested links out and special files, and each intent aimed at the directory that holds them, once per optional-argument variant. */
export function deepTree(intents: readonly Intent[]): fc.Arbitrary<Attack> {
  // Only what is walked is aimed at (a copy's source, not its new name): a case's calls stay few.
  const walked = intents.filter(({ kind }) => kind !== "fresh");
  const aims = (variant: number): Aim[] => walked.map(({ end }) => ({ candidate: { form: "text", text: DEEP_DIRECTORY }, ...(end === undefined ? {} : { end }), variant }));
  const frame: TreeEntry[] = [
    { kind: "dir", at: [DEEP_DIRECTORY] },
    { kind: "dir", at: INNER },
    { kind: "file", at: [...INNER, "kept.txt"] },
  ];
  return allOfItems(PIECES).map((pieces) => ({ entries: [...frame, ...pieces], aims: Array.from({ length: OPTION_VARIANTS }, (_, variant) => aims(variant)).flat() }));
}
