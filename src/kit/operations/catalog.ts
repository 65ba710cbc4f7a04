/**
 * The one catalogue of what a tool can do to a workspace (an operation) and of how the kit judges it
 * (an oracle), shared by every kind of target and every attack: the audit's `containment.*`
 * properties, the MCP client's classification of a server's tools, and the TOCTOU race.
 *
 * Promises: every operation names the roles its input has, whether it may change the workspace, the
 * oracles that judge it and the names a module's tool takes for it (docs/contract.md lists them);
 * every oracle states the rule it holds and the consequence a breach of it has, each once, here.
 * Does not promise: that a target's tool does what its operation says; the oracles find that out.
 */
import type { Consequence } from "../findings/findings.js";

/** What a tool does, as the audit attacks it. */
export type OperationId = "read" | "readMany" | "write" | "edit" | "mkdir" | "list" | "tree" | "search" | "grep" | "stat" | "move" | "copy" | "delete" | "extract" | "other";

/**
 * The parts of an operation's input: a path, a list of them, the two ends of a move, a pattern,
 * content, an edit's old and new text (which a tool may take bare or as a list of edits), and the
 * archive an extraction unpacks (into its `destination`).
 */
export type Role = "path" | "paths" | "source" | "destination" | "pattern" | "content" | "oldText" | "newText" | "archive";

/**
 * One operation's input, by role: what the audit asks, before a target's tool names its arguments;
 * `variant` picks which of the tool's optional arguments is sent with it (classify.ts, `optionOf`).
 * A tool that takes its paths as items of a list or files of a patch (carriers.ts) is sent `beside`
 * too, a harmless input of the same operation, as the other item: after the attacked one, or before
 * it when `last` (a tool that checks only its first item, or only its last, is met either way).
 */
export type OperationInput = Partial<Record<Exclude<Role, "paths">, string>> & { paths?: readonly string[]; variant?: number; beside?: OperationInput; last?: boolean };

/** How the kit judges a call; each oracle looks at the answer, the disk, or both. */
export type OracleId = "secretInAnswer" | "outsideRevealed" | "outsideChanged" | "secretImported" | "insideDestroyed" | "falseSuccess";

export interface Oracle {
  id: OracleId;
  /** The rule, as a clause: "no answer holds …". */
  rule: string;
  /** The rule as a property's title says it of a tool: "returns nothing from outside". */
  promise: string;
  consequence: Consequence;
}

export const ORACLES: Readonly<Record<OracleId, Oracle>> = {
  secretInAnswer: { id: "secretInAnswer", rule: "no answer holds content from outside the workspace", promise: "returns nothing from outside", consequence: "outside read" },
  outsideRevealed: {
    id: "outsideRevealed",
    rule: "no answer changes when only the outside changes (its names, sizes, times, contents, which paths exist)",
    promise: "reveals nothing of the outside",
    consequence: "outside revealed",
  },
  outsideChanged: { id: "outsideChanged", rule: "nothing outside the workspace is created, changed or removed", promise: "changes nothing outside", consequence: "outside changed" },
  secretImported: {
    id: "secretImported",
    rule: "no file inside the workspace comes to hold content from outside",
    promise: "brings nothing in from outside",
    consequence: "outside read",
  },
  insideDestroyed: {
    id: "insideDestroyed",
    rule: "no file inside the workspace loses its content to a call whose contract keeps it (a move never replaces its destination)",
    promise: "destroys nothing inside",
    consequence: "inside destroyed",
  },
  falseSuccess: {
    id: "falseSuccess",
    rule: "a call that answers success left its effect inside the workspace",
    promise: "puts what it reports inside",
    consequence: "misreported",
  },
};

export interface Operation {
  id: OperationId;
  /** What the tool does, as a report names it: "reads a file". */
  does: string;
  /** The roles its input must have; `edit`'s old and new text may reach a tool as a list of edits. */
  roles: readonly Role[];
  /**
   * Whether a call may change the workspace. A read-only call can be made again on the same workspace
   * with the outside changed, which is how `outsideRevealed` is judged; a changing one cannot.
   */
  changes: boolean;
  /** Whether its path names a directory (list, tree, search) rather than a file. */
  onDirectory: boolean;
  oracles: readonly OracleId[];
  /** The `spec.name`s a module's tool takes for this operation (docs/contract.md, "Further tools"). */
  moduleNames: readonly string[];
  /**
   * What its property attacks: `tree`, probes aimed at a laid-out tree (operations.ts); `entries`, the
   * entries of archives the audit builds, laid into the workspace (archives.ts).
   */
  attacked: "tree" | "entries";
}

const READ_ONLY: readonly OracleId[] = ["secretInAnswer", "outsideRevealed", "outsideChanged"];

/** Every operation, in the order the audit attacks them and the report lists them. */
export const OPERATIONS: readonly Operation[] = [
  { id: "read", does: "reads a file", roles: ["path"], changes: false, onDirectory: false, oracles: READ_ONLY, moduleNames: ["read"], attacked: "tree" },
  { id: "readMany", does: "reads several files", roles: ["paths"], changes: false, onDirectory: false, oracles: READ_ONLY, moduleNames: ["read_many"], attacked: "tree" },
  { id: "write", does: "writes a file", roles: ["path", "content"], changes: true, onDirectory: false, oracles: ["secretInAnswer", "outsideChanged", "falseSuccess"], moduleNames: ["write"], attacked: "tree" },
  {
    id: "edit",
    does: "replaces text in a file",
    roles: ["path", "oldText", "newText"],
    changes: true,
    onDirectory: false,
    oracles: ["secretInAnswer", "outsideChanged", "secretImported", "falseSuccess"],
    moduleNames: ["edit"],
    attacked: "tree",
  },
  { id: "mkdir", does: "makes a directory", roles: ["path"], changes: true, onDirectory: true, oracles: ["secretInAnswer", "outsideChanged"], moduleNames: ["mkdir"], attacked: "tree" },
  { id: "list", does: "lists a directory", roles: ["path"], changes: false, onDirectory: true, oracles: READ_ONLY, moduleNames: ["ls", "list"], attacked: "tree" },
  { id: "tree", does: "lists a directory recursively", roles: ["path"], changes: false, onDirectory: true, oracles: READ_ONLY, moduleNames: ["tree"], attacked: "tree" },
  { id: "search", does: "finds names matching a pattern", roles: ["path", "pattern"], changes: false, onDirectory: true, oracles: READ_ONLY, moduleNames: ["find", "glob", "search"], attacked: "tree" },
  { id: "grep", does: "finds content matching a pattern", roles: ["path", "pattern"], changes: false, onDirectory: true, oracles: READ_ONLY, moduleNames: ["grep"], attacked: "tree" },
  { id: "stat", does: "tells a file's metadata", roles: ["path"], changes: false, onDirectory: false, oracles: READ_ONLY, moduleNames: ["stat"], attacked: "tree" },
  {
    id: "move",
    does: "moves or renames a file",
    roles: ["source", "destination"],
    changes: true,
    onDirectory: false,
    oracles: ["secretInAnswer", "outsideChanged", "secretImported", "insideDestroyed"],
    moduleNames: ["move", "mv"],
    attacked: "tree",
  },
  {
    id: "copy",
    does: "copies a file",
    roles: ["source", "destination"],
    changes: true,
    onDirectory: false,
    oracles: ["secretInAnswer", "outsideChanged", "secretImported"],
    moduleNames: ["copy", "cp"],
    attacked: "tree",
  },
  { id: "delete", does: "removes a file", roles: ["path"], changes: true, onDirectory: false, oracles: ["secretInAnswer", "outsideChanged"], moduleNames: ["delete", "rm"], attacked: "tree" },
  /**
   * Unpacks an archive (a tar) into a directory. Its attack is the archive's entries, which the audit
   * builds and lays into the workspace: names that climb out or are absolute, a link out and then an
   * entry through it, a hard link to a file outside. Refusing the archive, or extracting only its safe
   * entries, keeps every rule.
   */
  {
    id: "extract",
    does: "extracts an archive",
    roles: ["archive", "destination"],
    changes: true,
    onDirectory: false,
    oracles: ["secretInAnswer", "outsideChanged", "secretImported"],
    moduleNames: ["extract", "untar"],
    attacked: "entries",
  },
  /**
   * Any other tool that takes a path: a mode, owner or times changed (chmod, chown, touch), or what no
   * name tells. Each path-like argument gets the attacked path; only the answer
   * and the canaries judge it (their content, mode, owner and times), since what it should do is unknown.
   */
  {
    id: "other",
    does: "does something else to a path",
    roles: ["path"],
    changes: true,
    onDirectory: false,
    oracles: ["secretInAnswer", "outsideChanged", "secretImported"],
    moduleNames: ["chmod", "chown", "touch"],
    attacked: "tree",
  },
];

export function operation(id: OperationId): Operation {
  const found = OPERATIONS.find((candidate) => candidate.id === id);
  if (found === undefined) throw new Error(`no operation ${id}`);
  return found;
}

/** The operation a module's tool plays by its `spec.name` (`ls` lists), or undefined. */
export function operationOfModuleName(name: string): OperationId | undefined {
  return OPERATIONS.find((candidate) => candidate.moduleNames.includes(name))?.id;
}

/** The property that attacks an operation: `containment.<operation>`. */
export function containmentId(id: OperationId): string {
  return `containment.${id}`;
}
