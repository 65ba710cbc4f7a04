/**
 * Peers' own test tables as corpora: what a row is, and the one replayer every corpus, tool set and
 * audit target goes through.
 *
 * A row carries an upstream test's inputs and its verdict as facts (never its code), where it comes
 * from (file, test name, commit), and the kit's own answer for each tool set, with the reason for every
 * place where the kit disagrees. Two kinds of row:
 * - `lexical`: a string question, `isInside(root, path)` under `path.posix` or `path.win32`. Upstream
 *   rows that list several allowed directories ask whether any of them holds the path.
 * - `tree`: a file tree in the `makefs` notation, laid out in a directory named `ROOT` inside a sandbox's
 *   workspace (`$ABS` is ROOT's absolute path), the tools rooted at `root` below it, and one `read` or
 *   `write` of `path`.
 *
 * Promises: `replayTree` reports what the call answered (accepted and which file it landed on, refused
 * as an escape, or failed with another error, paths written back as `$ABS`) and every change it made
 * under the workspace outside the tools' root, so a replay can never hide an escape behind a verdict.
 * Does not promise: that a row's inputs mean on this host what they meant upstream (win32 rows are
 * string questions here; a tree row runs on the host's filesystem).
 */
import { lstat, readFile, readdir, readlink, realpath } from "node:fs/promises";
import { join, relative } from "node:path";
import * as nodePath from "node:path";
import type { Tool } from "../../gates/tool.js";
import { ESCAPE_MESSAGE } from "../../gates/messages.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import { ABS_PLACEHOLDER, makefs, materialize } from "../sandbox/tree.js";

/** The name of the directory a tree row is laid out in, as in Go's `makefs`. */
export const LAYOUT_NAME = "ROOT";

/** Stands for `process.cwd()` in a lexical row whose upstream test used the working directory. */
export const CWD_PLACEHOLDER = "$CWD";

/** The tool sets every tree row is pinned for (the names of the tool-set registry). */
export const PINNED_TOOL_SETS = ["chapter", "verified"] as const;
export type PinnedToolSet = (typeof PINNED_TOOL_SETS)[number];

export interface Source {
  /** Path of the test file in the upstream repository. */
  file: string;
  /** The upstream test's name (`it(...)` or Go's case name). */
  test: string;
  commit: string;
  /** How a failure names the table when the file name does not: Go's `rootTestCases`. */
  table?: string;
}

/**
 * Why the kit answers differently from upstream: a choice it argues for, a bug of the kit's with its
 * issue, or upstream's own known bug, which its test pins as it stands.
 */
export type Difference = { kind: "design"; argument: string } | { kind: "bug"; issue: string } | { kind: "upstream bug"; issue: string };

export interface LexicalRow {
  kind: "lexical";
  /** Unique in its corpus; the audit names it on failure. */
  id: string;
  /** The row's number among its source file's rows, in file order: "case 3". */
  case: number;
  source: Source;
  flavour: "posix" | "win32";
  roots: readonly string[];
  path: string;
  upstream: boolean;
  kit: boolean;
  /** Present exactly when `kit !== upstream`. */
  difference?: Difference;
}

/** What upstream does with a tree row's call. */
export type UpstreamVerdict = { accepts: true; lands: string } | { accepts: false; reason: string };

/** What a tool answered: success on the file at `lands` (relative to ROOT), an escape, another error. */
export type Outcome =
  | { verdict: "accepted"; lands: string }
  | { verdict: "escape" }
  /** `message` follows the tool's `read: ` / `write: ` prefix, ROOT's absolute path written `$ABS`. */
  | { verdict: "error"; message: string };

export interface KitAnswer {
  outcome: Outcome;
  /** One line: why the tool set answers this. */
  why: string;
  /** Present exactly when the outcome disagrees with upstream. */
  difference?: Difference;
}

export interface TreeRow {
  kind: "tree";
  id: string;
  case: number;
  source: Source;
  /** The tree in `makefs` notation, relative to ROOT. */
  tree: readonly string[];
  /** The directory handed to the tools, relative to ROOT (`""`: ROOT itself); may be a symlink. */
  root: string;
  tool: "read" | "write";
  /** The path given to the tool; `$ABS` stands for ROOT's absolute path. */
  path: string;
  upstream: UpstreamVerdict;
  kit: Readonly<Record<PinnedToolSet, KitAnswer>>;
}

export type CorpusRow = LexicalRow | TreeRow;

export interface Corpus {
  /** `go` or `mcp`: the audit property is `corpus.<id>`. */
  id: string;
  /** How a failure names the table: "the official MCP filesystem server's own". */
  owner: string;
  repository: string;
  rows: readonly CorpusRow[];
  /** Upstream tests deliberately not carried over, each with the reason. */
  notCarried: readonly { source: Source; reason: string }[];
}

/** "fails the official MCP filesystem server's own sibling-paths case 3 (test name; file @ commit)". */
export function describeRow(corpus: Corpus, row: CorpusRow): string {
  const table = row.source.table ?? row.source.file.split("/").at(-1)?.replace(/\.test\.ts$/, "");
  return `${corpus.owner} ${table} case ${row.case} [${row.id}] ("${row.source.test}"; ${corpus.repository} ${row.source.file} @ ${row.source.commit.slice(0, 12)})`;
}

export function agrees(row: CorpusRow, answer: boolean | Outcome): boolean {
  if (row.kind === "lexical") return answer === row.upstream;
  const outcome = answer as Outcome;
  if (outcome.verdict !== "accepted") return !row.upstream.accepts;
  return row.upstream.accepts && row.upstream.lands === outcome.lands;
}

export function lexicalAnswer(row: LexicalRow, isInside: (root: string, path: string, pathApi?: nodePath.PlatformPath) => boolean): boolean {
  const cwd = (text: string) => text.replaceAll(CWD_PLACEHOLDER, process.cwd());
  const pathApi = row.flavour === "posix" ? nodePath.posix : nodePath.win32;
  return row.roots.some((root) => isInside(cwd(root), cwd(row.path), pathApi));
}

export interface TreeReplay {
  outcome: Outcome;
  /** Entries under the workspace added, removed or changed outside the tools' root (relative to ROOT). */
  outsideRoot: string[];
  /** Every entry the call added, removed or changed, inside the root or not (relative to ROOT). */
  changed: string[];
  /** Where the tools' root really is, relative to ROOT (`root` may be a symlink to it). */
  rootReal: string;
}

/**
 * Lays out the row's tree in `box`, builds the tools with `createTools` at the row's root, makes the
 * call and reports what happened. `box` must be fresh (an empty workspace).
 */
export async function replayTree(row: TreeRow, box: Sandbox, createTools: (root: string) => readonly Tool[]): Promise<TreeReplay> {
  const layout = join(box.root, LAYOUT_NAME);
  await materialize(makefs(row.tree, [LAYOUT_NAME]), box);
  const abs = (text: string) => text.replaceAll(ABS_PLACEHOLDER, layout);
  const tools = createTools(join(layout, row.root));
  const tool = tools.find((candidate) => candidate.spec.name === row.tool);
  if (tool === undefined) throw new Error(`the tool set has no ${row.tool} tool`);
  const rootReal = await realpath(join(layout, row.root));
  const before = await snapshot(box.root);
  const written = `written by ${row.id}`;
  const result = await tool.execute(row.tool === "read" ? { path: abs(row.path) } : { path: abs(row.path), content: written });
  const changed = changesBetween(before, await snapshot(box.root));
  const outsideRoot = changed.filter((path) => relative(rootReal, path).startsWith("..")).map((path) => relative(layout, path));
  const report = { outsideRoot, changed: changed.map((path) => relative(layout, path)), rootReal: relative(layout, rootReal) };
  const content = String(result.content);
  if (result.isError === true) {
    const message = content.replace(new RegExp(`^${row.tool}: `), "").replaceAll(layout, ABS_PLACEHOLDER);
    return { outcome: message === ESCAPE_MESSAGE ? { verdict: "escape" } : { verdict: "error", message }, ...report };
  }
  const lands = row.tool === "read" ? readLanding(box, content) : await writeLanding(changed, written);
  return { outcome: lands === undefined ? { verdict: "error", message: `success without a file to show for it: ${content.slice(0, 120)}` } : { verdict: "accepted", lands: relative(layout, lands) }, ...report };
}

// materialize fills every file with `file <path under the workspace>`, so content read back names it.
function readLanding(box: Sandbox, content: string): string | undefined {
  const named = /^file (.*)\n$/.exec(content)?.[1];
  return named === undefined ? undefined : join(box.root, named);
}

async function writeLanding(changed: readonly string[], written: string): Promise<string | undefined> {
  for (const path of changed) if ((await readFile(path, "utf8").catch(() => undefined)) === written) return path;
  return undefined;
}

/** Every entry under `dir` with what it is: a directory, a link's text, a file's content. */
async function snapshot(dir: string, into = new Map<string, string>()): Promise<Map<string, string>> {
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    const stats = await lstat(path);
    if (stats.isSymbolicLink()) into.set(path, `link ${await readlink(path)}`);
    else if (stats.isFile()) into.set(path, `file ${await readFile(path, "latin1")}`);
    else if (stats.isDirectory()) {
      into.set(path, "dir");
      await snapshot(path, into);
    } else into.set(path, `special ${stats.mode}`);
  }
  return into;
}

/** Absolute paths added, removed, or changed in type, link text or content. */
function changesBetween(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  return [...new Set([...before.keys(), ...after.keys()])].filter((path) => before.get(path) !== after.get(path)).sort();
}
