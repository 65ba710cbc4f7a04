/**
 * The workspace root as a caller may hand it over: names beyond ASCII (non-ASCII, spaces, quotes, a
 * U+FFFD that a raw byte beside it decodes to) and spellings other than the canonical path (through a
 * symlink alias, with a trailing slash, relative to the working directory, with `.` and `..`
 * segments). An implementation must judge every path against the root's real path, whatever spelling
 * it was given.
 *
 * Promises: `spellRoot` answers a path that names the sandbox's root (the alias is the sandbox's own
 * link in its scratch directory, never in a canary), the same path for the same sandbox and spelling,
 * so that an MCP server started on it serves every case of that spelling.
 */
import fc from "fast-check";
import { basename, relative } from "node:path";
import type { Sandbox } from "../../sandbox/sandbox.js";
import { REPLACEMENT_CHARACTER } from "../../sandbox/root-twins.js";

/** Root names: plain, non-ASCII (a normalization twin exists), lossy, with a space, with quotes. */
export const ROOT_NAMES = ["ws", "wé", `w${REPLACEMENT_CHARACTER}s`, "w s", `w'q"s`] as const;

export const ROOT_SPELLINGS = ["canonical", "symlinkAlias", "trailingSlash", "relative", "dotSegments"] as const;
export type RootSpelling = (typeof ROOT_SPELLINGS)[number];

export interface WorkspaceRoot {
  name: string;
  spelling: RootSpelling;
}

export interface WorkspaceRootConstraints {
  /** The names to draw from (default `ROOT_NAMES`). */
  names?: readonly string[];
}

export function workspaceRoot({ names = ROOT_NAMES }: WorkspaceRootConstraints = {}): fc.Arbitrary<WorkspaceRoot> {
  return fc.record({
    name: fc.oneof({ weight: 3, arbitrary: fc.constant(names[0] ?? "ws") }, { weight: 2, arbitrary: fc.constantFrom(...names) }),
    // The alias is the spelling a careless implementation gets wrong silently: drawn twice as often.
    spelling: fc.oneof({ weight: 2, arbitrary: fc.constant("symlinkAlias" as const) }, { weight: 4, arbitrary: fc.constantFrom(...ROOT_SPELLINGS) }),
  });
}

export function spellRoot(box: Sandbox, spelling: RootSpelling): string {
  switch (spelling) {
    case "canonical":
      return box.root;
    case "symlinkAlias":
      return box.rootAlias;
    case "trailingSlash":
      return `${box.root}/`;
    case "relative":
      return relative(process.cwd(), box.root) || ".";
    case "dotSegments":
      return `${box.root}/./../${basename(box.root)}/.`;
  }
}

/** Every spelling of the sandbox's root, as `spellRoot` answers them. */
export function rootSpellings(box: Sandbox): string[] {
  return ROOT_SPELLINGS.map((spelling) => spellRoot(box, spelling));
}

export function renderRoot({ name, spelling }: WorkspaceRoot): string {
  return `root: ${JSON.stringify(name)} (${spelling})`;
}
