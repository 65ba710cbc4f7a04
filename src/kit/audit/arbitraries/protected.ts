/**
 * The attack on protected entries (operations/protected-paths.ts): for every pattern the user gave,
 * an entry it matches laid out at the root and, for a pattern that matches at any depth, nested at
 * every depth below it (`tools/.git`, `tools/repo/.git`, `tools/repo/deep/.git`: a deny list anchored
 * at the root misses them); beside the root's entry its twins (letter case, a trailing dot, a trailing
 * space, the other Unicode normalization), each protected too, since the filesystems where those
 * spellings meet open the entry itself; links to it; the spellings a tool may rewrite into its name
 * after a check (`%2Egit`, `'.git'`, `．ｇｉｔ`: twins.ts), each a plain directory inside; and aims at
 * each, also spelled `./`, through a `..` and with a doubled slash.
 *
 * Promises: every entry is laid out in every tree and shrinking drops the groups a failure does not
 * need (droppable.ts); an entry is a directory holding `PROTECTED_FILE` at the root and at even depths
 * and a file at odd ones (a pattern may name either), a directory always for a pattern ending in `/`;
 * every aim names a path `isProtectedPath` takes for protected, or the workspace itself (for an
 * operation on a directory, which a recursive listing or search walks into).
 * Does not promise: that every name a glob matches is tried; one spelling of it (`instanceOf`) is.
 */
import fc from "fast-check";
import { type ProtectedPattern, instanceOf, isProtectedPath, matchesNested } from "../../operations/protected-paths.js";
import type { TreeEntry } from "../../sandbox/tree.js";
import { allOf } from "./droppable.js";
import { NAME_REWRITES } from "./twins.js";
import { type Aim, type Attack, type Intent, joinAttacks } from "./trees.js";

/** The file inside a protected directory: `.git/config`, as the advisories read it. */
export const PROTECTED_FILE = "config";

/** The directories a nested entry is laid out under, one deeper each (GHSA-9c83-rr99-vfwj read `tools/repo/.git/config`). */
export const NESTING = ["tools", "repo", "deep"] as const;

/** A plain directory for the `..` detour (`via/../.git/config`). */
export const DETOUR = "via";

type Form = "directory" | "file";

/** The twins of a name that spell the same entry on macOS or Windows, each differing from it. */
export function protectedTwins(name: string): string[] {
  const twins = [name.toUpperCase(), `${name}.`, `${name} `, name.normalize("NFD"), name.normalize("NFC")];
  return [...new Set(twins)].filter((twin) => twin !== name);
}

/** The aims at an entry at `path` of `form`, per intent, with its text spelled by `spell`. */
function aimsAt(path: readonly string[], form: Form, intents: readonly Intent[], spell: (text: string) => string = (text) => text): Aim[] {
  const place = path.join("/");
  return intents.flatMap(({ kind, end }): Aim[] => {
    const text = form === "file" ? (kind === "existing" ? place : undefined) : kind === "existing" ? `${place}/${PROTECTED_FILE}` : kind === "fresh" ? `${place}/new.txt` : place;
    return text === undefined ? [] : [{ candidate: { form: "text", text: spell(text) }, ...(end === undefined ? {} : { end }) }];
  });
}

/** The entries of one protected entry at `path`: its parents, then the entry (a directory with its file, or a file). */
function laid(path: readonly string[], form: Form): TreeEntry[] {
  const parents = path.slice(0, -1).map((_, index): TreeEntry => ({ kind: "dir", at: path.slice(0, index + 1) }));
  return [...parents, ...(form === "directory" ? [{ kind: "dir" as const, at: path }, { kind: "file" as const, at: [...path, PROTECTED_FILE] }] : [{ kind: "file" as const, at: path }])];
}

/** Every group of entries and aims for one pattern (`index`: its place among the patterns, naming its links). */
function patternGroups(pattern: ProtectedPattern, index: number, intents: readonly Intent[]): Attack[] {
  const instance = instanceOf(pattern);
  const formAt = (depth: number): Form => (pattern.directoryOnly || depth % 2 === 0 ? "directory" : "file");
  const root: Attack = { entries: laid(instance, "directory"), aims: aimsAt(instance, "directory", intents) };
  const spelled: Attack = {
    entries: [...laid(instance, "directory"), { kind: "dir", at: [DETOUR] }],
    aims: [(text: string) => `./${text}`, (text: string) => `${DETOUR}/../${text}`, (text: string) => text.replace("/", "//")].flatMap((spell) => aimsAt(instance, "directory", intents, spell)),
  };
  const nested = matchesNested(pattern)
    ? NESTING.map((_, depth): Attack => {
        const path = [...NESTING.slice(0, depth + 1), ...instance];
        return { entries: laid(path, formAt(depth + 1)), aims: aimsAt(path, formAt(depth + 1), intents) };
      })
    : [];
  const twins = instance.flatMap((name, position) =>
    protectedTwins(name).map((twin): Attack => {
      const path = instance.map((other, at) => (at === position ? twin : other));
      return { entries: laid(path, "directory"), aims: aimsAt(path, "directory", intents) };
    }),
  );
  // Spellings a tool may rewrite into the protected name after its check (`%2Egit`, `'.git'`, `．ｇｉｔ`):
  // each a plain directory inside, which a deny list rightly lets through, beside the protected entry.
  const rewritten: Attack[] = NAME_REWRITES.filter((rewrite) => rewrite.joins === undefined && rewrite.home !== true)
    .map((rewrite) => rewrite.spell(instance[0] as string))
    .filter((spelled, at, all) => all.indexOf(spelled) === at && !isProtectedPath([pattern], [spelled], true))
    .map((spelled) => {
      const path = [spelled, ...instance.slice(1)];
      return { entries: [...laid(instance, "directory"), ...laid(path, "directory")], aims: aimsAt(path, "directory", intents) };
    });
  const linkName = `to-protected${index}`;
  const links: Attack = {
    entries: [
      ...laid(instance, "directory"),
      { kind: "symlink", at: [linkName], target: { form: "relative", area: "root", path: instance } },
      { kind: "symlink", at: [`${linkName}-file`], target: { form: "relative", area: "root", path: [...instance, PROTECTED_FILE] } },
    ],
    aims: [...aimsAt([linkName], "directory", intents), ...aimsAt([`${linkName}-file`], "file", intents)],
  };
  // Shrinking drops the groups in order and keeps the last one a failure needs: the plainest comes last.
  return [links, ...rewritten, ...twins, ...nested, spelled, root];
}

/**
 * Every pattern's entries and aims, each group dropped by shrinking when a failure does not need it;
 * an operation on a directory also aims at the workspace itself, which holds them all.
 */
export function protectedAttack(patterns: readonly ProtectedPattern[], intents: readonly Intent[]): fc.Arbitrary<Attack> {
  const groups = patterns.flatMap((pattern, index) => patternGroups(pattern, index, intents));
  const whole: Attack[] = intents.some((intent) => intent.kind === "directory") ? [{ entries: [], aims: [{ candidate: { form: "text", text: "" } }] }] : [];
  return allOf([...groups, ...whole].map((group) => fc.constant(group))).map(joinAttacks);
}
