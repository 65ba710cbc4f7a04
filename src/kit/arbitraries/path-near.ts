/**
 * `pathNear({ root })`: concrete paths around a root you choose (an `mkdtemp` directory, your
 * workspace), for properties of a containment check outside the audit's sandbox.
 *
 * Promises: every value is a path string that starts at the root, at one of its similar-prefix
 * siblings (`<root>-other`, `<root>2`, `<root>_bak`, `<root> `, `<root>'`, `<root>.d`, `<root>..`,
 * `<root>-`) or at the root's parent, followed by at most `maxSegments` segments drawn from `..`, `.`,
 * the empty segment, `..foo`, plain names and the root's and siblings' base names, joined by the
 * platform's separator and never normalized: a check meets the forms that break string comparisons
 * (the sibling that shares the root's prefix, `..` that leaves and comes back). Shrinks towards the
 * root itself.
 * Does not promise: that the paths exist. They are for pure checks (`isInside`); to put files behind
 * them, use the sandbox (`createSandbox`) and the symbolic candidates.
 */
import fc from "fast-check";
import { basename, dirname, sep } from "node:path";
import { SIMILAR_PREFIX_SUFFIXES } from "../sandbox/sandbox.js";

export interface PathNearConstraints {
  /** An absolute path: the root the paths are drawn around. */
  root: string;
  /** The most segments after the starting point (default 3). */
  maxSegments?: number;
}

export function pathNear({ root, maxSegments = 3 }: PathNearConstraints): fc.Arbitrary<string> {
  const siblings = SIMILAR_PREFIX_SUFFIXES.map((suffix) => `${root}${suffix}`);
  const start = fc.oneof(
    { weight: 2, arbitrary: fc.constant(root) },
    { weight: 2, arbitrary: fc.constantFrom(...siblings) },
    { weight: 1, arbitrary: fc.constant(dirname(root)) },
  );
  const names = [basename(root), ...siblings.map((sibling) => basename(sibling))];
  const segment = fc.constantFrom("a", "..", ".", "", "..foo", ...names);
  return fc
    .tuple(start, fc.array(segment, { maxLength: maxSegments }))
    .map(([from, segments]) => [from, ...segments].join(sep));
}
