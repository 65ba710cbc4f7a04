/**
 * A counterexample as data (`Counterexample`, the `case` of a JSON result) and as the text every
 * report prints (`renderCounterexample`): the workspace the case laid out, how the tools were made, and
 * the calls, in order, as the case made them.
 *
 * Promises: each call is an expression that makes the same call again, with the arguments the case
 * passed, as `showValue` writes them (`$BOX` standing for the sandbox's directory):
 * `read.execute({"path":"l/secret.txt"})` for a tool of the module, `workspacePath($BOX + "/ws", "a",
 * false)` for an export, `client.callTool({"name":…,"arguments":…})` for an MCP server's tool. The
 * calls are the transcript of the run that failed (surface.ts), not a description of what it meant to
 * do, unless the property names them itself (isInside, which is not transcribed). Calls are numbered
 * from 1, as the reasons name them (`read (call 2)`), and `broke` is the number of the call the rule
 * broke at, when the rule broke at one. Tree entries are named as on the disk (tree.ts, `shownTree`).
 * Does not promise: that a call made against another sandbox does the same (its tree must be laid out
 * first, and paths under `$BOX` are that sandbox's); an input is shown as it was when the case ended,
 * so a tool that changes the object it was passed changes what its call shows.
 */
import type { RootSpelling } from "../arbitraries/workspace-root.js";
import { showValue } from "./show.js";
import { type SentCall, type Transcript } from "../../operations/surface.js";
import { BOX_NAME, type ShownEntry, type Tree, entryLine, showName, shownTree } from "../../sandbox/tree.js";
import { ROOT_ALIAS } from "../../sandbox/sandbox.js";
import { posix } from "node:path";

/** A call as a report shows it. */
export interface ShownCall {
  /** What is called: a tool by its name, or an export (`workspacePath`, `isInside`). */
  subject: string;
  /** An expression that makes the same call. */
  call: string;
  /**
   * Where the call's paths lead when one leaves the workspace: the directory beside it (`ws-other`,
   * `outside`, `$BOX`, `..`), read from the path's text, and the link of the tree it goes `through`
   * (`ws/l`), when it is one that crosses. Lexical: a link the tree does not lay out is not followed.
   */
  reaches?: string;
  through?: string;
}

/** A file the case writes after its tree is laid out, with a content of its own (`materialize` writes `file <path>\n`). */
export interface WrittenFile {
  /** From the root: `file.txt`. */
  path: string;
  content: string;
}

/** What a property's `render` says of a case: its workspace, what else it sets up, and its calls when the transcript has none. */
export interface Scene {
  workspace?: { name: string; spelling: RootSpelling; tree: Tree; written?: readonly WrittenFile[] };
  /** What the case does besides its calls, in words (a fault injected, the root swapped), each a line. */
  setup?: readonly string[];
  /** The calls, for a property whose calls are not transcribed. */
  calls?: readonly ShownCall[];
}

export interface Counterexample {
  workspace?: { name: string; spelling: RootSpelling; tree: ShownEntry[]; written?: WrittenFile[] };
  /** How the tools were made (`createWorkspaceTools($BOX + "/ws")`), each way once. */
  tools?: string[];
  setup?: string[];
  calls: ShownCall[];
  /** The call the rule broke at, counted from 1 as the calls are numbered; none when it broke at no single call (a change found after them). */
  broke?: number;
}

/**
 * Where a violation broke the rule: at a call (its index among the case's calls); at no single call
 * (a change found after them all, a server that died among calls in flight); or at the last call made
 * (undefined).
 */
export type BrokenAt = number | "no single call" | undefined;

/** How a root handed to the tools was spelled, in words (the text report's and the page's). */
export const SPELLINGS: Readonly<Record<RootSpelling, string>> = {
  canonical: "handed over as its real path",
  symlinkAlias: "handed over through a symlink to it",
  trailingSlash: "handed over with a trailing slash",
  relative: "handed over relative to the working directory",
  dotSegments: "handed over with . and .. segments",
};

// Words a tool's name cannot be called by: `delete.execute(…)` does not parse.
const RESERVED = new Set(
  "await break case catch class const continue debugger default delete do else enum export extends false finally for function if import in instanceof let new null return static super switch this throw true try typeof var void while with yield".split(" "),
);

/** How a call names a tool: `read`, or `tool("read-file")` for a name that is no identifier. */
export function toolCallee(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) && !RESERVED.has(name) ? name : `tool(${JSON.stringify(name)})`;
}

const TOOLS_MADE = "createWorkspaceTools";

/**
 * The counterexample of a failed run: the scene its property renders, and the calls its transcript
 * holds (`made`: how many calls had been made when the rule broke, for a violation that names none).
 */
export function counterexampleOf(scene: Scene, transcript: Transcript | undefined, brokenAt: BrokenAt, made: number | undefined): Counterexample {
  const options = { boxes: transcript?.sandboxes ?? [] };
  const shown = (sent: SentCall): string => {
    const args = sent.args.map((arg) => showValue(arg, options));
    if (sent.via === "tool") return `${toolCallee(sent.name)}.execute(${args.join(", ")})`;
    if (sent.via === "mcp") return `client.callTool({"name":${JSON.stringify(sent.name)},"arguments":${args.join(", ")}})`;
    return `${sent.name}(${args.join(", ")})`;
  };
  const sent = transcript?.sent ?? [];
  const isMaking = (call: SentCall) => call.via === "export" && call.name === TOOLS_MADE;
  const tools = [...new Set(sent.filter(isMaking).map(shown))];
  const workspace = scene.workspace === undefined ? undefined : shownWorkspace(scene.workspace);
  const calls =
    scene.calls === undefined
      ? sent.filter((call) => !isMaking(call)).map((call) => ({ subject: call.name, call: shown(call), ...(workspace === undefined ? {} : leaving(call.args, workspace, options.boxes)) }))
      : [...scene.calls];
  const before = made === undefined ? calls.length : sent.slice(0, made).filter((call) => !isMaking(call)).length;
  const broke = brokenAt === "no single call" ? undefined : typeof brokenAt === "number" ? brokenAt + 1 : before > 0 ? before : undefined;
  return {
    ...(workspace === undefined ? {} : { workspace }),
    ...(tools.length === 0 ? {} : { tools }),
    ...(scene.setup === undefined || scene.setup.length === 0 ? {} : { setup: [...scene.setup] }),
    calls,
    ...(broke === undefined || broke > calls.length ? {} : { broke }),
  };
}

/** Where the first of a call's string arguments that leaves the workspace leads (`ShownCall.reaches`), nothing when none does. */
function leaving(args: readonly unknown[], workspace: NonNullable<Counterexample["workspace"]>, boxes: readonly string[]): Pick<ShownCall, "reaches" | "through"> {
  const base = "/box";
  const root = `${base}/${workspace.name}`;
  const crossing = crossingLinks(workspace.tree);
  for (const text of stringsIn(args)) {
    const box = boxes.find((path) => path !== "" && text.includes(path));
    // The root as the tools were handed it through its alias is the root.
    const inBox = box === undefined ? undefined : text.slice(text.indexOf(box) + box.length).replace(new RegExp(`^/scratch/${ROOT_ALIAS}(?=/|$)`), `/${workspace.name}`);
    if (inBox === undefined && posix.isAbsolute(text)) continue;
    const resolved = inBox === undefined ? posix.resolve(root, text) : posix.resolve(base, `.${inBox}`);
    if (resolved === base) return { reaches: BOX_NAME };
    if (!resolved.startsWith(`${base}/`)) return { reaches: ".." };
    if (resolved !== root && !resolved.startsWith(`${root}/`)) return { reaches: resolved.slice(base.length + 1).split("/")[0] as string };
    // The prefixes grow one name at a time: a path of a deep tree has thousands of names.
    let prefix = workspace.name;
    for (const part of resolved.slice(root.length + 1).split("/")) {
      prefix += `/${part}`;
      const link = crossing.get(prefix);
      if (link !== undefined) return { reaches: link.reaches ?? "outside", through: link.path };
    }
  }
  return {};
}

/** The tree's links that cross, by path, the first of a path kept: looked up once per name of every call's path. */
function crossingLinks(tree: readonly ShownEntry[]): Map<string, ShownEntry> {
  const links = new Map<string, ShownEntry>();
  for (const entry of tree) if (entry.crosses && !links.has(entry.path)) links.set(entry.path, entry);
  return links;
}

/** Every string in a call's arguments: an input's fields, a list's items. */
function stringsIn(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (typeof value !== "object" || value === null) return [];
  return Object.values(value).flatMap(stringsIn);
}

function shownWorkspace({ name, spelling, tree, written = [] }: NonNullable<Scene["workspace"]>): NonNullable<Counterexample["workspace"]> {
  return { name, spelling, tree: shownTree(tree, name), ...(written.length === 0 ? {} : { written: [...written] }) };
}

/** The counterexample as the text report prints it under `counterexample:`, and every other report carries it. */
export function renderCounterexample(example: Counterexample): string {
  const { workspace } = example;
  const lines = [
    ...(workspace === undefined
      ? []
      : [
          `workspace: ${showName(workspace.name)}, ${SPELLINGS[workspace.spelling]}`,
          "tree:",
          ...(workspace.tree.length === 0 && workspace.written === undefined ? ["  (empty workspace)"] : workspace.tree.map((entry) => `  ${entryLine(entry)}`)),
          ...(workspace.written ?? []).map(({ path, content }) => `  ${showName(`${workspace.name}/${path}`)} holds ${showValue(content)}`),
        ]),
    ...(example.tools ?? []).map((made) => `tools: ${made}`),
    ...(example.setup ?? []),
  ];
  if (example.calls.length > 0) {
    const where = example.broke === undefined || example.calls.length === 1 ? "" : ` (the rule broke at call ${example.broke})`;
    lines.push(`${example.calls.length === 1 ? "call" : "calls, in order"}${where}:`, ...example.calls.map((call, index) => `  ${index + 1}. ${call.call}`));
  }
  return lines.join("\n");
}
