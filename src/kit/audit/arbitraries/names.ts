/**
 * Component names that attack string handling: names that look like parent steps, quotes, spaces,
 * backslashes, shell syntax, non-ASCII. None of them is `..` itself (climbs are placed by climbs.ts).
 */
import fc from "fast-check";

/** Names used to build trees, including one that only looks like a parent step. */
export const TREE_NAMES = ["a", "b", "c", "..foo"] as const;

export function treeName(): fc.Arbitrary<string> {
  return fc.constantFrom(...TREE_NAMES);
}

/** Names that break naive string handling: dots, spaces, quotes, unicode, backslashes, shell syntax. */
export function trickyName(): fc.Arbitrary<string> {
  return fc.constantFrom("..foo", "...", "a b", "it's", '"q"', "é", "日本", "back\\slash", "-rf", "$HOME", "~", ".hidden", " ");
}

/** One component that is not a parent step: mostly tree names, sometimes `.`, empty or tricky. */
export function plainSegment(): fc.Arbitrary<string> {
  return fc.oneof({ weight: 4, arbitrary: treeName() }, { weight: 2, arbitrary: fc.constantFrom(".", "") }, { weight: 1, arbitrary: trickyName() });
}
