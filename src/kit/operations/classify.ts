/**
 * Which operation a tool plays, and which of its arguments plays each role, read from what the tool
 * says of itself: its name and the JSON Schema of its input (an MCP server's `tools/list`, a module
 * tool's `spec.inputSchema`).
 *
 * Promises: `classifyTool` answers the operation with the argument of every role it needs (and a
 * value for every other required argument), or "no path", when no argument is a path, a list of
 * paths, the ends of a move, or holds one (a list of objects, an object, a patch: carriers.ts). A
 * tool that takes a path no operation fits plays `other`, the generic attack, every path-like argument
 * (a role's name, a path's word in its name, a URI's format) sent the attacked path, so no tool
 * that takes a path is left unattacked for want of a name. A tool whose name is
 * one of the contract's (`ls`, `move`, …: catalog.ts) plays that operation, its roles taken from the
 * schema where it names them and from the contract's own argument names otherwise.
 * Does not promise: to be right about a tool it has never seen. It reads names, as a user would; the
 * mapping file (docs/contract.md) corrects or extends it, and the report shows what it decided.
 */
import { type OperationId, type OperationInput, type Role, operation, operationOfModuleName } from "./catalog.js";
import { type Carrier, type PatchForm, fileUri, holdsPatch, patchFormOf, patchText, takesUri } from "./carriers.js";
import { flat, words } from "./words.js";

export { words } from "./words.js";

/** The part of a tool a classification reads. */
export interface ToolDescription {
  name: string;
  description?: string | undefined;
  inputSchema?: unknown;
}

/** How a call of one tool is built from an operation's input. */
export interface ArgumentPlan {
  /** The argument that takes each role (for `edit` through a list of edits, `oldText` and `newText` name the items' fields). */
  roles: Partial<Record<Role, string>>;
  /** The list argument whose items are `{ [roles.oldText]: …, [roles.newText]: … }`, when edits come as a list. */
  edits?: string;
  /** Every other required argument, with the value it is sent. */
  fixed: Record<string, unknown>;
  /** Every optional argument no role takes, with the values it is sent, one at a time (`optionOf`). */
  optional: readonly OptionalArgument[];
  /** The argument the roles live in when they are not the call's own (carriers.ts): a list of objects, one object, or a patch's text. */
  carrier?: Carrier;
  /** `file-uri`: the path roles are sent as `file://` URIs (the argument's name or format says URI). */
  spelling?: "file-uri";
  /** Other arguments sent the `path` role's value too: every path-like argument of a tool attacked generically (`other`). */
  samePath?: readonly string[];
  /**
   * Why no call can carry the attacked path (an MCP resource template whose variables the audit cannot
   * tell apart, and the mapping does not place: mcp/resources.ts): the tool is never called, and
   * coverage counts it not attacked, with this reason.
   */
  unplaced?: string;
}

/**
 * A value an optional argument is sent: a value as it is, or the probe's own path, alone or in a
 * list (an argument that names a path is attacked as one).
 */
export type OptionValue = { value: unknown } | { path: "one" | "list" };

/** An optional argument of a tool's input schema and the values the audit sends it. */
export interface OptionalArgument {
  name: string;
  values: readonly OptionValue[];
}

/** What a user says of one tool (an MCP mapping's `tools`): the operation it plays, its arguments by role, or that it is excluded, and why. */
export type ToolOverride =
  | { exclude: string }
  | {
      operation: OperationId;
      /** By role; `items` names the list (or object) whose items hold the roles, `patch` the text whose headers name the paths. */
      arguments: Partial<Record<Role | "edits" | "items" | "patch", string>>;
      fixed: Record<string, unknown>;
      /** The form of the `patch` argument's text (default: the one the tool's description shows). */
      patchForm?: PatchForm;
      /** `file-uri`: the path roles are sent as `file://` URIs. */
      spelling?: "file-uri";
      /** `official`: no mapping named this tool; it plays its role by the official filesystem server's name for it. */
      from?: "official";
    };

export type Classification =
  | { kind: "operation"; operation: OperationId; plan: ArgumentPlan; by: "name" | "schema" | "mapping" | "official name" | "resources" }
  | { kind: "no path"; why: string }
  | { kind: "excluded"; why: string };

interface PropertySchema {
  type?: unknown;
  format?: unknown;
  items?: unknown;
  properties?: unknown;
  required?: unknown;
  description?: unknown;
  default?: unknown;
  const?: unknown;
  enum?: unknown;
  minimum?: unknown;
  maximum?: unknown;
}

// Argument names by role, flattened. A name alone decides: descriptions are prose and say "path" of
// things that are not one.
const ROLE_NAMES: Readonly<Record<Role, readonly string[]>> = {
  path: ["path", "filepath", "filename", "file", "dir", "dirpath", "directory", "directorypath", "folder", "folderpath", "absolutepath", "relativepath", "targetpath", "notebookpath", "uri", "fileuri", "url", "fileurl"],
  paths: ["paths", "files", "filepaths", "filenames"],
  source: ["source", "src", "from", "sourcepath", "oldpath", "frompath"],
  destination: ["destination", "dest", "dst", "to", "destinationpath", "newpath", "topath", "target"],
  pattern: ["pattern", "glob", "globpattern", "query", "regex", "search", "searchpattern", "namepattern"],
  content: ["content", "contents", "text", "data", "body", "filetext"],
  oldText: ["oldtext", "oldstring", "oldstr", "old", "search", "find"],
  newText: ["newtext", "newstring", "newstr", "new", "replace", "replacement"],
  // Only a tool whose name says it extracts takes these (`extractPlan`): `path` and `source` are the archive there.
  archive: ["archive", "archivepath", "archivefile", "zip", "zipfile", "zippath", "tar", "tarball", "tarfile", "tarpath", "path", "file", "filepath", "source", "src", "sourcepath", "input", "inputpath"],
};

/** Words of a tool's name that say it unpacks an archive. */
const EXTRACT_WORDS = ["extract", "unzip", "untar", "unpack", "unarchive", "decompress"];
/** Where an extraction puts the entries, beyond a destination's usual names: `output_dir`, `extract_to`. */
const EXTRACT_INTO = ["outputdir", "outdir", "output", "outputpath", "outputdirectory", "extractto", "extractdir", "targetdir", "targetdirectory", "destdir", "destinationdir", "destinationdirectory", "into", "dir", "directory"];

const PATH_ROLES: readonly Role[] = ["path", "paths", "source", "destination"];

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function propertiesOf(schema: unknown): { properties: Record<string, PropertySchema>; required: string[] } {
  const object = asObject(schema);
  const properties = (asObject(object?.properties) ?? {}) as Record<string, PropertySchema>;
  const required = Array.isArray(object?.required) ? object.required.filter((name): name is string => typeof name === "string") : [];
  return { properties, required };
}

const isType = (schema: PropertySchema | undefined, type: string) => schema?.type === type || (Array.isArray(schema?.type) && schema.type.includes(type));

/** Whether a schema is an object's, with properties of its own to read. */
const isObjectSchema = (schema: unknown) => asObject(asObject(schema)?.properties) !== undefined;

/**
 * The argument whose name plays `role` and whose type fits it, if there is one: a list of paths is a
 * list of strings, never of objects (those carry roles of their own: `carriedPlan`).
 */
function argumentFor(role: Role, properties: Record<string, PropertySchema>): string | undefined {
  const wanted = role === "paths" ? "array" : "string";
  const fits = (schema: PropertySchema | undefined) => (schema?.type === undefined || isType(schema, wanted)) && !(role === "paths" && isObjectSchema(schema?.items));
  return Object.keys(properties).find((name) => ROLE_NAMES[role].includes(flat(name)) && fits(properties[name]));
}

/** The list argument whose items hold an old and a new text (`edits: [{ oldText, newText }]`). */
function editList(properties: Record<string, PropertySchema>): { argument: string; oldText: string; newText: string } | undefined {
  for (const [name, schema] of Object.entries(properties)) {
    if (!isType(schema, "array")) continue;
    const items = propertiesOf(schema.items).properties;
    const oldText = argumentFor("oldText", items);
    const newText = argumentFor("newText", items);
    if (oldText !== undefined && newText !== undefined) return { argument: name, oldText, newText };
  }
  return undefined;
}

/**
 * A value the schema itself offers for a required argument no role fills, or one of its type; a mode
 * is a private file's (`600`, which no file the audit makes has), a time a real one long past, so a
 * chmod or a touch that reaches a canary changes it.
 */
function placeholder(schema: PropertySchema | undefined, name: string): unknown {
  if (schema === undefined) return "";
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const said = words(name);
  const number = isType(schema, "integer") || isType(schema, "number");
  if (said.includes("mode") || said.includes("permissions")) return number ? 0o600 : "600";
  if (["time", "mtime", "atime", "date", "timestamp"].some((word) => said.includes(word))) return number ? 1_000_000_000 : "2001-09-09T01:46:40Z";
  if (isType(schema, "boolean")) return false;
  if (isType(schema, "integer") || isType(schema, "number")) return 1;
  if (isType(schema, "array")) return [];
  if (isType(schema, "object")) return {};
  return "";
}

/** The operation a name points at when its arguments are only a path (`get_file_info` tells metadata). */
function operationByName(name: string): OperationId | undefined {
  const said = new Set(words(name));
  const any = (...options: string[]) => options.some((word) => said.has(word));
  if (any("tree")) return "tree";
  if (any("info", "stat", "stats", "metadata")) return "stat";
  if (any("mkdir") || (any("create", "make", "new", "ensure") && any("directory", "dir", "folder"))) return "mkdir";
  if (any("delete", "remove", "rm", "unlink", "trash")) return "delete";
  if (any("list", "ls", "dir", "directory", "listing")) return "list";
  if (any("read", "cat", "view", "open", "get", "show", "load")) return "read";
  return undefined;
}

/** Search by content rather than by name: `grep`, `search_file_content`, a regex over text. */
function searchesContent(tool: ToolDescription): boolean {
  const said = new Set([...words(tool.name), ...words(String(tool.description ?? "")).slice(0, 40)]);
  return said.has("grep") || said.has("content") || said.has("contents") || said.has("ripgrep");
}

function rolesFound(roles: readonly Role[], properties: Record<string, PropertySchema>): Partial<Record<Role, string>> {
  return Object.fromEntries(roles.flatMap((role) => [argumentFor(role, properties)].filter((argument) => argument !== undefined).map((argument) => [role, argument])));
}

function planFor(id: OperationId, properties: Record<string, PropertySchema>, required: readonly string[], fallbackToContract: boolean): ArgumentPlan | undefined {
  const needed = operation(id).roles;
  const edits = id === "edit" ? editList(properties) : undefined;
  const roles: Partial<Record<Role, string>> = edits === undefined ? rolesFound(needed, properties) : { ...rolesFound(["path"], properties), oldText: edits.oldText, newText: edits.newText };
  for (const role of needed) {
    if (roles[role] !== undefined) continue;
    if (!fallbackToContract) return undefined;
    roles[role] = role;
  }
  const taken = new Set([...Object.values(roles), ...(edits === undefined ? [] : [edits.argument])]);
  const fixed = Object.fromEntries(required.filter((name) => !taken.has(name)).map((name) => [name, placeholder(properties[name], name)]));
  return { roles, ...(edits === undefined ? {} : { edits: edits.argument }), fixed, optional: optionalArguments(properties, [...taken, ...required]) };
}

/** The most values one optional argument is sent: enough for every edge of a number, and the values of a short enum. */
const MOST_OPTION_VALUES = 8;

/** Names of arguments that hold a path, flattened: a role's names and the usual words for a base directory. */
const PATH_WORDS = ["path", "dir", "directory", "folder", "file", "cwd", "root", "base", "workdir", "workspace", "location"];
/** Names of arguments that hold a pattern a walk filters by. */
const PATTERN_WORDS = ["pattern", "patterns", "glob", "globs", "exclude", "include", "ignore", "filter"];

/**
 * Every argument of the schema that is neither required nor `taken`, with the values it is sent: both
 * booleans, every value of an enum, a number's edges within its bounds, the probe's own path for an
 * argument that names one (or a list of them), a pattern for one that filters, and otherwise one
 * value of its type.
 */
function optionalArguments(properties: Record<string, PropertySchema>, taken: readonly string[]): OptionalArgument[] {
  return Object.entries(properties)
    .filter(([name]) => !taken.includes(name))
    .map(([name, schema]) => ({ name, values: optionValues(name, schema).slice(0, MOST_OPTION_VALUES) }))
    .filter((argument) => argument.values.length > 0);
}

function optionValues(name: string, schema: PropertySchema): OptionValue[] {
  const named = words(name);
  const said = (vocabulary: readonly string[]) => named.some((word) => vocabulary.includes(word)) || vocabulary.includes(flat(name));
  const values = (...list: unknown[]) => list.map((value) => ({ value }));
  if (schema.const !== undefined) return values(schema.const);
  if (Array.isArray(schema.enum)) return values(...schema.enum);
  if (isType(schema, "boolean")) return values(true, false);
  if (isType(schema, "integer") || isType(schema, "number")) return values(...numberEdges(schema));
  if (isType(schema, "string")) return said(PATH_WORDS) ? [{ path: "one" }] : said(PATTERN_WORDS) ? values("*") : values("");
  if (isType(schema, "array")) return said(PATH_WORDS) ? [{ path: "list" }] : said(PATTERN_WORDS) ? values(["*"], []) : values([]);
  if (isType(schema, "object")) return values({});
  return [];
}

/** A number's edges: 0, 1, -1 and the largest 32-bit integer, and the schema's own bounds, each within them. */
function numberEdges(schema: PropertySchema): number[] {
  const minimum = typeof schema.minimum === "number" ? schema.minimum : -Infinity;
  const maximum = typeof schema.maximum === "number" ? schema.maximum : Infinity;
  const edges = [1, 0, -1, 2 ** 31 - 1, minimum, maximum].filter((edge) => Number.isFinite(edge) && edge >= minimum && edge <= maximum);
  return [...new Set(edges)];
}

/** The optional argument and value a probe's `variant` sends: none for 0, otherwise one pair in turn. */
export function optionOf(plan: ArgumentPlan, variant: number | undefined): { name: string; value: OptionValue } | undefined {
  const pairs = plan.optional.flatMap(({ name, values }) => values.map((value) => ({ name, value })));
  if (variant === undefined || variant <= 0 || pairs.length === 0) return undefined;
  return pairs[(variant - 1) % pairs.length];
}

export function classifyTool(tool: ToolDescription, override?: ToolOverride): Classification {
  const { properties, required } = propertiesOf(tool.inputSchema);
  if (override !== undefined) {
    if ("exclude" in override) return { kind: "excluded", why: override.exclude };
    return { kind: "operation", operation: override.operation, plan: overriddenPlan(tool, override, properties, required), by: override.from === "official" ? "official name" : "mapping" };
  }
  const extract = extractPlan(tool, properties, required);
  if (extract !== undefined) return { kind: "operation", operation: "extract", plan: spelled(extract, properties), by: operationOfModuleName(tool.name) === "extract" ? "name" : "schema" };
  const contract = operationOfModuleName(tool.name);
  if (contract !== undefined) {
    const plan = planFor(contract, properties, required, true) as ArgumentPlan;
    return { kind: "operation", operation: contract, plan: spelled(plan, properties), by: "name" };
  }
  const has = (role: Role) => argumentFor(role, properties) !== undefined;
  const pathArguments = PATH_ROLES.flatMap((role) => [argumentFor(role, properties)].filter((name) => name !== undefined));
  if (pathArguments.length === 0) return carriedPlan(tool, properties, required) ?? genericPlan(properties, required) ?? { kind: "no path", why: "no argument names a path, a list of paths, or the ends of a move" };
  const said = new Set(words(tool.name));
  let id: OperationId | undefined;
  if (has("source") && has("destination")) id = said.has("copy") || said.has("cp") ? "copy" : "move";
  else if (has("paths")) id = "readMany";
  else if (has("path") && (editList(properties) !== undefined || (has("oldText") && has("newText")))) id = "edit";
  else if (has("path") && has("content")) id = "write";
  else if (has("path") && has("pattern")) id = searchesContent(tool) ? "grep" : "search";
  else if (has("path")) id = operationByName(tool.name);
  const plan = id === undefined ? undefined : planFor(id, properties, required, false);
  if (id === undefined || plan === undefined) return genericPlan(properties, required) as Classification;
  return { kind: "operation", operation: id, plan: spelled(plan, properties), by: "schema" };
}

/**
 * The plan of a tool whose name says it extracts (`extract_archive`, `unzip`, the contract's `untar`)
 * and that takes an archive and a place to put its entries (`{ archive_path, output_dir }`, `{ path,
 * destination }`); none otherwise (a contract name is then planned by `planFor`, from its own names).
 */
function extractPlan(tool: ToolDescription, properties: Record<string, PropertySchema>, required: readonly string[]): ArgumentPlan | undefined {
  const contract = operationOfModuleName(tool.name);
  if (contract === undefined ? !words(tool.name).some((word) => EXTRACT_WORDS.includes(word)) : contract !== "extract") return undefined;
  const strings = Object.keys(properties).filter((name) => properties[name]?.type === undefined || isType(properties[name], "string"));
  const archive = strings.find((name) => ROLE_NAMES.archive.includes(flat(name)));
  const destination = strings.find((name) => name !== archive && [...ROLE_NAMES.destination, ...EXTRACT_INTO].includes(flat(name)));
  if (archive === undefined || destination === undefined) return undefined;
  return { roles: { archive, destination }, fixed: fixedOf(properties, required, [archive, destination]), optional: optionalArguments(properties, [archive, destination, ...required]) };
}

/**
 * Where a plan's paths go when they are not arguments of their own, as a report says it: "in each item
 * of `files`", "in the headers of the patch `patch` (unified)", "as file:// URIs"; none otherwise.
 */
export function carriedAs(plan: ArgumentPlan): string | undefined {
  const { carrier, spelling } = plan;
  if (plan.unplaced !== undefined) return `never called: ${plan.unplaced}`;
  const where =
    carrier === undefined ? undefined
    : carrier.kind === "patch" ? `in the file headers of the patch \`${carrier.argument}\` (${carrier.form === "envelope" ? "*** Begin Patch" : "unified"})`
    : carrier.kind === "list" ? `in each item of \`${carrier.argument}\` (the attacked one first and last)`
    : `in the object \`${carrier.argument}\``;
  const parts = [where, spelling === "file-uri" ? "as file:// URIs" : undefined].filter((part) => part !== undefined);
  return parts.length === 0 ? undefined : `paths ${parts.join(", ")}`;
}

/** The plan, its paths spelled as `file://` URIs when the argument of a path role is named or formatted as a URI. */
function spelled(plan: ArgumentPlan, properties: Record<string, PropertySchema>): ArgumentPlan {
  const uri = (["path", "source", "destination", "archive"] as const).some((role) => {
    const name = plan.roles[role];
    return name !== undefined && name in properties && takesUri(name, properties[name]?.format);
  });
  return uri ? { ...plan, spelling: "file-uri" } : plan;
}

/** Words that make an argument's name a path's (`archive_path`, `output_dir`), unless a word of content is beside them. */
const PATH_NOUNS = ["path", "dir", "directory", "folder", "file", "filename", "uri", "url", "destination", "source", "target"];
const NOT_PATH_WORDS = ["content", "contents", "text", "data", "body", "pattern", "mode", "type", "size", "encoding", "name"];

/** Whether an argument holds one path: a role's name, or a path's word in its name (its format a URI), as a string. */
function pathLike(name: string, schema: PropertySchema | undefined): boolean {
  if (schema?.type !== undefined && !isType(schema, "string")) return false;
  if (PATH_ROLES.some((role) => role !== "paths" && ROLE_NAMES[role].includes(flat(name)))) return true;
  const said = words(name);
  return (said.some((word) => PATH_NOUNS.includes(word)) && !said.some((word) => NOT_PATH_WORDS.includes(word))) || takesUri(name, schema?.format);
}

/**
 * The generic attack's plan for a tool that takes a path no operation of the catalogue fits (a chmod,
 * an archive's extraction, what no name tells): `other`, every path-like argument sent the attacked
 * path; none when no argument is path-like.
 */
function genericPlan(properties: Record<string, PropertySchema>, required: readonly string[]): Classification | undefined {
  const paths = Object.keys(properties).filter((name) => pathLike(name, properties[name]));
  const [first, ...rest] = paths;
  if (first === undefined) return undefined;
  const plan: ArgumentPlan = { roles: { path: first }, ...(rest.length === 0 ? {} : { samePath: rest }), fixed: fixedOf(properties, required, paths), optional: optionalArguments(properties, [...paths, ...required]) };
  return { kind: "operation", operation: "other", plan: spelled(plan, properties), by: "schema" };
}

/** Every required argument but `taken`, with the value it is sent. */
function fixedOf(properties: Record<string, PropertySchema>, required: readonly string[], taken: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(required.filter((name) => !taken.includes(name)).map((name) => [name, placeholder(properties[name], name)]));
}

/**
 * A tool with no path argument of its own whose roles live elsewhere (carriers.ts): in each object of
 * a list or in one object (the items are classified as a tool of the same name would be), or in the
 * headers of a patch (which writes files).
 */
function carriedPlan(tool: ToolDescription, properties: Record<string, PropertySchema>, required: readonly string[]): Classification | undefined {
  for (const [name, schema] of Object.entries(properties)) {
    const outer = { fixed: fixedOf(properties, required, [name]), optional: optionalArguments(properties, [name, ...required]) };
    const list = isType(schema, "array") && isObjectSchema(schema.items);
    if (list || ((schema.type === undefined || isType(schema, "object")) && isObjectSchema(schema))) {
      const inner = classifyTool({ name: tool.name, description: tool.description, inputSchema: list ? schema.items : schema });
      if (inner.kind !== "operation" || inner.plan.carrier !== undefined) continue;
      const { roles, edits, fixed, spelling } = inner.plan;
      const carrier: Carrier = { kind: list ? "list" : "object", argument: name, fixed };
      return { kind: "operation", operation: inner.operation, plan: { roles, ...(edits === undefined ? {} : { edits }), ...outer, carrier, ...(spelling === undefined ? {} : { spelling }) }, by: "schema" };
    }
    if (isType(schema, "string") && holdsPatch(tool.name, name))
      return { kind: "operation", operation: "write", plan: { roles: { path: name, content: name }, ...outer, carrier: { kind: "patch", argument: name, form: patchFormOf(tool.description) } }, by: "schema" };
  }
  return undefined;
}

/** The plan a mapping's entry gives a tool: its roles over the schema's, in the list or patch it names, its fixed values over the placeholders. */
function overriddenPlan(tool: ToolDescription, override: Extract<ToolOverride, { operation: OperationId }>, properties: Record<string, PropertySchema>, required: readonly string[]): ArgumentPlan {
  const { edits, items, patch, ...named } = override.arguments;
  const spelling = override.spelling === undefined ? {} : { spelling: override.spelling };
  const outside = (carried: string) => ({
    fixed: { ...fixedOf(properties, required, [carried, ...Object.keys(override.fixed)]), ...override.fixed },
    optional: optionalArguments(properties, [carried, ...required, ...Object.keys(override.fixed)]),
  });
  if (patch !== undefined)
    return { roles: { path: patch, content: patch }, ...outside(patch), carrier: { kind: "patch", argument: patch, form: override.patchForm ?? patchFormOf(tool.description) }, ...spelling };
  if (items !== undefined) {
    const schema = properties[items];
    const list = schema === undefined || !isType(schema, "object");
    const inner = propertiesOf(list ? schema?.items : schema);
    const found = planFor(override.operation, inner.properties, inner.required, true) as ArgumentPlan;
    const roles = { ...found.roles, ...named };
    const listed = edits ?? (named.oldText === undefined ? found.edits : undefined);
    const taken = [...Object.values(roles), ...(listed === undefined ? [] : [listed])];
    const carrier: Carrier = { kind: list ? "list" : "object", argument: items, fixed: fixedOf(inner.properties, inner.required, taken) };
    return { roles, ...(listed === undefined ? {} : { edits: listed }), ...outside(items), carrier, ...spelling };
  }
  const found = planFor(override.operation, properties, required, true) as ArgumentPlan;
  const roles = { ...found.roles, ...named };
  const taken = new Set([...Object.values(roles), ...(edits === undefined ? (found.edits === undefined ? [] : [found.edits]) : [edits])]);
  const fixed = { ...Object.fromEntries(Object.entries(found.fixed).filter(([argument]) => !taken.has(argument))), ...override.fixed };
  const listed = edits ?? (named.oldText === undefined ? found.edits : undefined);
  const optional = found.optional.filter(({ name }) => !taken.has(name) && !(name in override.fixed));
  return { roles, ...(listed === undefined ? {} : { edits: listed }), fixed, optional, ...spelling };
}

/**
 * The arguments of one call: each role's value under the tool's own name, paths as `pathFor` spells
 * them (as `file://` URIs below `root` when the plan says so), the optional argument the input's
 * `variant` sends (a path-like one takes the input's first path), and for a tool whose roles live in
 * a list or a patch, the input and its `beside` as two items, the attacked one first or `last`.
 */
export function argumentsFor(plan: ArgumentPlan, input: OperationInput, pathFor: (path: string) => unknown, root?: string): Record<string, unknown> {
  const spell = plan.spelling === "file-uri" ? (path: string) => fileUri(String(pathFor(path)), root) : pathFor;
  const args: Record<string, unknown> = { ...plan.fixed };
  const option = optionOf(plan, input.variant);
  if (option !== undefined) {
    const path = input.path ?? input.source ?? input.archive ?? input.paths?.[0] ?? "";
    args[option.name] = "value" in option.value ? option.value.value : option.value.path === "one" ? pathFor(path) : [pathFor(path)];
  }
  const { carrier } = plan;
  if (carrier === undefined) return Object.assign(args, roleArguments(plan, input, spell));
  const inputs = input.beside === undefined || carrier.kind === "object" ? [input] : input.last === true ? [input.beside, input] : [input, input.beside];
  if (carrier.kind === "patch") args[carrier.argument] = patchText(carrier.form, inputs.map((one) => ({ path: String(spell(one.path ?? "")), content: one.content ?? "" })));
  else {
    const items = inputs.map((one) => ({ ...carrier.fixed, ...roleArguments(plan, one, spell) }));
    args[carrier.argument] = carrier.kind === "list" ? items : items[0];
  }
  return args;
}

/** Each role's value of one input under the tool's own names (an item's, for a tool whose roles live in a list). */
function roleArguments(plan: ArgumentPlan, input: OperationInput, spell: (path: string) => unknown): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  const { roles } = plan;
  for (const role of ["path", "source", "destination", "archive"] as const) {
    const value = input[role];
    if (value !== undefined && roles[role] !== undefined) args[roles[role]] = spell(value);
  }
  if (input.path !== undefined) for (const name of plan.samePath ?? []) args[name] = spell(input.path);
  if (input.paths !== undefined && roles.paths !== undefined) args[roles.paths] = input.paths.map(spell);
  for (const role of ["pattern", "content"] as const) if (input[role] !== undefined && roles[role] !== undefined) args[roles[role]] = input[role];
  if (input.oldText !== undefined && input.newText !== undefined && roles.oldText !== undefined && roles.newText !== undefined) {
    const edit = { [roles.oldText]: input.oldText, [roles.newText]: input.newText };
    if (plan.edits === undefined) Object.assign(args, edit);
    else args[plan.edits] = [edit];
  }
  return args;
}
