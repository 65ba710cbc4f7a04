/**
 * The containment test at the end of gate 3: is `path` the workspace root or below it?
 *
 * Promises: with canonical (realpath'd) arguments of the same platform, true exactly when `path` is
 * `root` or a descendant. `..foo` and `...` are names, not parent steps, so they count as inside; a
 * sibling with a similar prefix (`/work-other` beside `/work`) and, on win32, another drive are outside.
 * Does not promise: anything about symlinks. It compares strings; canonicalizing them is
 * `workspacePath`'s job. Case: under `path.posix` the comparison is case-sensitive, which on a
 * case-insensitive file system can only refuse, never admit, a path. Under `path.win32` it is not:
 * `path.win32.relative` ignores case, so `C:\Work\x` counts as inside `c:\work`, which on a directory
 * with case sensitivity turned on is another directory.
 */
import * as nodePath from "node:path";

/** The slice of `node:path` the check uses, injectable so one host can test posix and win32 rules. */
export type PathApi = Pick<typeof nodePath, "relative" | "isAbsolute" | "sep" | "resolve">;

export function isInside(root: string, path: string, pathApi: PathApi = nodePath): boolean {
  const value = pathApi.relative(root, path);
  return (
    // Stryker disable next-line ConditionalExpression,StringLiteral: the chapter's shortcut is redundant: "" neither starts with "..", nor is "..", nor is absolute, so the second clause accepts it too
    value === "" ||
    (!value.startsWith(`..${pathApi.sep}`) && value !== ".." && !pathApi.isAbsolute(value))
  );
}
