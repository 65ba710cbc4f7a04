/**
 * Generated filesystem trees as plain data, and how they are laid out inside a sandbox's workspace.
 *
 * Promises: `materialize` creates entries only inside the workspace and only under directories it
 * created itself (never through a symlink), so setting up a tree cannot touch a canary; entries that
 * do not fit (parent missing or not a directory, name taken) are skipped and left out of the answer.
 * Link targets stay within the sandbox by construction: they name the workspace, the outside canary or
 * a twin of the root, or a relative text of at most two parent steps. A report shows what was laid
 * out (`shownTree`, `renderTree`) by the names on the disk: a twin by its own name, a link by the text
 * it has, the sandbox's directory written `$BOX`, so each place has one name in every report.
 * Does not promise: that every generated entry exists; read the returned list, not the input.
 *
 * Tables write trees in Go's `makefs` notation (`makefs` below), the one notation for a tree given as
 * text; generators build `TreeEntry` values directly.
 */
import { linkSync, lstatSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join, posix, relative } from "node:path";
import type { Sandbox, SpecialKind } from "./sandbox.js";
import { namedTwins } from "./root-twins.js";
import { AuditFault } from "./fault.js";

/** Where a link points: the workspace, the outside canary, or the i-th twin of the root (root-twins.ts). */
export type Area = "root" | "outside" | `sibling${number}`;

export type LinkTarget =
  | { form: "absolute" | "relative"; area: Area; path: readonly string[] }
  /** Written verbatim, for the targets that are about the text itself: `.`, `..`, `../`, a self name. */
  | { form: "text"; text: string };

export type TreeEntry =
  | { kind: "dir"; at: readonly string[] }
  | { kind: "file"; at: readonly string[] }
  | { kind: "symlink"; at: readonly string[]; target: LinkTarget }
  /** A second name for an existing file: another workspace file, or the outside canary's secret. */
  | { kind: "hardlink"; at: readonly string[]; to: { area: "root"; path: readonly string[] } | { area: "outside" } }
  /** A file that is not regular: a FIFO, a socket, a character device (sandbox.ts, `SpecialKind`). */
  | { kind: "special"; at: readonly string[]; special: SpecialKind };

export type Tree = readonly TreeEntry[];

export function areaPath(box: Sandbox, area: Area): string {
  if (area === "root") return box.root;
  if (area === "outside") return box.outside;
  const sibling = box.siblings[siblingIndex(area, box.siblings.length)];
  if (sibling === undefined) throw new Error(`no sibling for ${area}`);
  return sibling;
}

/** Which of `count` twins `siblingN` reaches: generators draw N from a range wider than most roots' twins. */
function siblingIndex(area: `sibling${number}`, count: number): number {
  return Number(area.slice("sibling".length)) % count;
}

export function linkText(box: Sandbox, at: readonly string[], target: LinkTarget): string {
  if (target.form === "text") return target.text;
  const absolute = join(areaPath(box, target.area), ...target.path);
  return target.form === "absolute" ? absolute : relative(join(box.root, ...at.slice(0, -1)), absolute) || ".";
}

/**
 * The entries `materialize` creates, in order: the first entry of a name wins, and an entry is left out
 * when its parent is no directory of the tree or, for a hardlink into the workspace, its file is none of
 * the tree's files. Counterexamples show these, so a shrunk tree never names one path twice.
 */
export function laidOut(tree: Tree): TreeEntry[] {
  const directories = new Set([""]);
  const taken = new Set<string>();
  const files = new Set<string>();
  const kept: TreeEntry[] = [];
  for (const entry of tree) {
    const key = entry.at.join("/");
    if (entry.at.length === 0 || taken.has(key) || !directories.has(entry.at.slice(0, -1).join("/"))) continue;
    if (entry.kind === "hardlink" && entry.to.area === "root" && !files.has(entry.to.path.join("/"))) continue;
    if (entry.kind === "dir") directories.add(key);
    if (entry.kind === "file" || entry.kind === "hardlink") files.add(key);
    taken.add(key);
    kept.push(entry);
  }
  return kept;
}

/**
 * Lays the tree out under `box.root` and answers the entries that were created (`laidOut`, less a
 * special file this process cannot make: a device node needs root). The calls are synchronous, as the
 * sandbox's own work is (sandbox.ts says why), and the answer a promise, as `workspace-gates/arbitraries`
 * has always exported it.
 */
export async function materialize(tree: Tree, box: Sandbox): Promise<TreeEntry[]> {
  const created: TreeEntry[] = [];
  for (const entry of laidOut(tree)) {
    try {
      if (await layOut(entry, box)) created.push(entry);
    } catch (error) {
      // The tree goes into a workspace as new, before any call: a failure here is the audit's own.
      throw new AuditFault(`the audit could not lay out ${entry.at.join("/")} in the workspace: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return created;
}

/** Makes one entry, answering whether it was made. */
async function layOut(entry: TreeEntry, box: Sandbox): Promise<boolean> {
  const path = join(box.root, ...entry.at);
  // Where the filesystem folds letter case or normalization, a name and its twin are one name: the
  // second does not fit, and is left out like any other.
  if (existing(path)) return false;
  switch (entry.kind) {
    case "dir":
      mkdirSync(path);
      break;
    case "file":
      writeFileSync(path, `file ${entry.at.join("/")}\n`);
      break;
    case "symlink":
      symlinkSync(linkText(box, entry.at, entry.target), path);
      break;
    case "hardlink":
      linkSync(entry.to.area === "outside" ? join(box.outside, "secret.txt") : join(box.root, ...entry.to.path), path);
      break;
    case "special": {
      // Every special file of a sandbox is a name of the one it keeps of that kind: making a FIFO or a
      // device node takes a process, a link does not.
      const made = await box.specialFile(entry.special);
      if (made === undefined) return false;
      linkSync(made, path);
      break;
    }
  }
  return true;
}

function existing(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The placeholder for the absolute path of the directory a `makefs` tree is laid out in, as in Go. */
export const ABS_PLACEHOLDER = "$ABS";

/**
 * A tree written as Go's `makefs` strings (golang/go `src/os/root_test.go`), one entry per string,
 * relative to the directory it is laid out in, which sits at `under` inside the workspace:
 * `"d/"` a directory, `"f"` a file, `"a => b"` a symlink whose text is `b`, where a leading `$ABS`
 * stands for that directory's absolute path. Parent directories are made implicitly, as in Go, and
 * `under` itself comes first. Throws on an entry that `materialize` would silently drop: a name with
 * `.`, `..` or an empty component, or `$ABS` anywhere but at the start of a link text.
 */
export function makefs(lines: readonly string[], under: readonly string[] = []): Tree {
  const entries: TreeEntry[] = under.map((_, index) => ({ kind: "dir", at: under.slice(0, index + 1) }));
  const made = new Set(entries.map((entry) => entry.at.join("/")));
  const add = (entry: TreeEntry) => {
    for (let depth = under.length + 1; depth < entry.at.length; depth++) {
      const parent = entry.at.slice(0, depth);
      if (!made.has(parent.join("/"))) entries.push({ kind: "dir", at: parent });
      made.add(parent.join("/"));
    }
    if (!made.has(entry.at.join("/"))) entries.push(entry);
    made.add(entry.at.join("/"));
  };
  for (const line of lines) {
    const [name = "", text] = line.split(" => ");
    const parts = name.replace(/\/$/, "").split("/");
    if (parts.some((part) => part === "" || part === "." || part === "..")) throw new Error(`makefs: not a plain relative name: ${JSON.stringify(line)}`);
    const at = [...under, ...parts];
    if (text === undefined) add({ kind: name.endsWith("/") ? "dir" : "file", at });
    else if (!text.slice(ABS_PLACEHOLDER.length).includes(ABS_PLACEHOLDER) && text.startsWith(ABS_PLACEHOLDER))
      add({ kind: "symlink", at, target: { form: "absolute", area: "root", path: [...under, ...text.slice(ABS_PLACEHOLDER.length).split("/").filter((part) => part !== "")] } });
    else if (text.includes(ABS_PLACEHOLDER)) throw new Error(`makefs: ${ABS_PLACEHOLDER} only at the start of a link text: ${JSON.stringify(line)}`);
    else add({ kind: "symlink", at, target: { form: "text", text } });
  }
  return entries;
}

/** How a report names the directory that holds the workspace and its neighbours (`dirname(box.root)`). */
export const BOX_NAME = "$BOX";

/** One laid-out entry as a report shows it: its names as on the disk, and where a link leads. */
export interface ShownEntry {
  /** From the directory that holds the workspace: `ws/a/l`, under the root's own name. */
  path: string;
  kind: TreeEntry["kind"];
  /** A link's text as laid out (`../../ws-other`, `$BOX/outside/secret.txt`); a hardlink's other name (`outside/secret.txt`). */
  to?: string;
  /**
   * For a link, the directory beside the workspace it leads into, by its name (`outside`, `ws-other`),
   * the root's own name when it stays inside, `$BOX` for the directory holding them all, `..` above it.
   * Read from the text, so a link through another link is placed where its own text leads.
   */
  reaches?: string;
  /** A link that leads out of the workspace. */
  crosses: boolean;
  /** What a special file is (sandbox.ts, `SpecialKind`). */
  special?: SpecialKind;
  /** The entry as `materialize` takes it. */
  entry: TreeEntry;
}

/**
 * The entries `materialize` lays out, each named as on the disk of a sandbox whose root is named
 * `rootName`: a twin by its own name (`ws-other`), never by its index.
 */
export function shownTree(tree: Tree, rootName = "ws"): ShownEntry[] {
  const nameOf = (area: Area) => areaName(area, rootName);
  return laidOut(tree).map((entry): ShownEntry => {
    const path = [rootName, ...entry.at].join("/");
    const plain = { path, kind: entry.kind, crosses: false, entry };
    switch (entry.kind) {
      case "dir":
      case "file":
        return plain;
      case "symlink": {
        const { target } = entry;
        if (target.form !== "text") {
          const reached = [nameOf(target.area), ...target.path];
          const to = target.form === "absolute" ? [BOX_NAME, ...reached].join("/") : posix.relative(posix.join("/", ...path.split("/").slice(0, -1)), posix.join("/", ...reached)) || ".";
          return { ...plain, to, reaches: nameOf(target.area), crosses: target.area !== "root" };
        }
        const reaches = textReaches(path, target.text);
        return { ...plain, to: target.text, reaches, crosses: reaches !== rootName };
      }
      case "hardlink":
        return entry.to.area === "outside"
          ? { ...plain, to: "outside/secret.txt", reaches: "outside", crosses: true }
          : { ...plain, to: [rootName, ...entry.to.path].join("/"), reaches: rootName };
      case "special":
        return { ...plain, special: entry.special };
    }
  });
}

/** An area by the name its directory has beside a root named `rootName`: `ws`, `outside`, `ws-other`. */
export function areaName(area: Area, rootName = "ws"): string {
  if (area === "root" || area === "outside") return area === "root" ? rootName : "outside";
  const twins = namedTwins(rootName);
  return twins[siblingIndex(area, twins.length)] as string;
}

/** Where a link at `path` (from the box) whose text is `text` leads: the top directory in the box, `$BOX` itself, or `..` above it. */
function textReaches(path: string, text: string): string {
  const box = "/box";
  const resolved = posix.resolve(posix.join(box, posix.dirname(path)), text);
  if (resolved === box) return BOX_NAME;
  return resolved.startsWith(`${box}/`) ? (resolved.slice(box.length + 1).split("/")[0] as string) : "..";
}

/**
 * A name as a line shows it: bare, unless it needs quotes to be read back (spaces at its ends, quotes,
 * controls, empty), and with its combining marks escaped when it is not in NFC, so that the root's
 * normalization twin never reads as the root.
 */
export function showName(name: string): string {
  const bare = name !== "" && name.trim() === name && JSON.stringify(name) === `"${name}"` && !name.includes(" -> ");
  if (name === name.normalize("NFC")) return bare ? name : JSON.stringify(name);
  return JSON.stringify(name).replace(/[\u0300-\u036f]/g, (mark) => `\\u${(mark.codePointAt(0) as number).toString(16).padStart(4, "0")}`);
}

/** An entry's line in a counterexample: `ws/a/`, `ws/a/l -> ../../ws-other`, `ws/h == outside/secret.txt (hardlink)`. */
export function entryLine(shown: ShownEntry): string {
  switch (shown.kind) {
    case "dir":
      return `${showName(shown.path)}/`;
    case "file":
      return showName(shown.path);
    case "symlink":
      return `${showName(shown.path)} -> ${showName(shown.to ?? "")}`;
    case "hardlink":
      return `${showName(shown.path)} == ${showName(shown.to ?? "")} (hardlink)`;
    case "special":
      return `${showName(shown.path)} (${SPECIAL_NAMES[shown.special ?? "fifo"]})`;
  }
}

/** How a report names each kind of special file. */
export const SPECIAL_NAMES: Readonly<Record<SpecialKind, string>> = { fifo: "a FIFO", socket: "a socket", device: "a character device" };

/** One line per entry, as a counterexample shows it (`entryLine`), indented; `(empty workspace)` for none. */
export function renderTree(tree: Tree, rootName = "ws"): string {
  const shown = shownTree(tree, rootName);
  return shown.length === 0 ? "  (empty workspace)" : shown.map((entry) => `  ${entryLine(entry)}`).join("\n");
}
