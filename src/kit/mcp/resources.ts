/**
 * An MCP server's resources as surfaces the audit attacks: `resources/read` with a `file://` URI of
 * every path the read property aims, and each resource template with the variable that carries the
 * path filled with it. Each plays `read` (or, as the mapping says, another operation a URI alone
 * asks: list, tree, stat), so its containment property judges it with the same canaries, and the
 * coverage table gives each a row: a server's resources are never left unasked.
 *
 * Promises: `resourceSurfaces` lists `resources/read` for a server that declares resources, and one
 * surface per template (`resource template <uriTemplate>`), excluded when `--exclude-tool` or the
 * mapping names it; a template with one variable carries the path in it, one the mapping's
 * `resources` places (`ResourceOverride`) where the mapping says, with its other variables fixed; a
 * template with several variables, or none, that the mapping does not place is never called, and
 * coverage counts it not attacked with why (`ArgumentPlan.unplaced`). `resourceUri` writes the path
 * raw (each name percent-encoded, `..` kept: the server meets it itself).
 * Does not promise: to read a resource the server names by a scheme of its own (`db://…`) as a path;
 * a template that is no `file://` URI is filled with the path as the mapping's `paths` makes it.
 */
import type { ArgumentPlan, Classification } from "../operations/classify.js";
import { fileUri } from "../operations/carriers.js";
import type { OfferedTool } from "../operations/surface.js";
import type { McpResources } from "./client.js";

/** The surface of `resources/read` itself. */
export const RESOURCES_READ = "resources/read";

const TEMPLATE_PREFIX = "resource template ";

/** How a report names a resource template. */
export const templateSurface = (uriTemplate: string) => `${TEMPLATE_PREFIX}${uriTemplate}`;

/** The template a surface's name holds, or undefined for any other surface. */
export const templateOf = (surface: string) => (surface.startsWith(TEMPLATE_PREFIX) ? surface.slice(TEMPLATE_PREFIX.length) : undefined);

/** Whether a surface is one of the server's resources rather than one of its tools. */
export const isResource = (surface: string) => surface === RESOURCES_READ || templateOf(surface) !== undefined;

/** The operations a resource can play: each asks one path and nothing else, as one URI does. */
export const RESOURCE_OPERATIONS = ["read", "list", "tree", "stat"] as const;

/**
 * What the mapping's `resources` says of `resources/read` or of one template: the operation it plays,
 * the template's variable that carries the path, the values of its other variables, and whether the
 * path is sent absolute (the mapping's `paths`); or that it is excluded, and why.
 */
export type ResourceOverride =
  | { exclude: string }
  | { operation: (typeof RESOURCE_OPERATIONS)[number]; path?: string; fixed: Readonly<Record<string, string>>; paths?: "absolute" | "relative" };

/** One `{…}` expression of a URI template (RFC 6570): its operator and its variables' names, in order. */
interface Expression {
  at: number;
  length: number;
  operator: string;
  names: string[];
}

function expressionsOf(template: string): Expression[] {
  return [...template.matchAll(/\{([+#./;?&]?)([^}]*)\}/g)].map((match) => ({
    at: match.index,
    length: match[0].length,
    operator: match[1] as string,
    // `{var*}` and `{var:3}` name `var`.
    names: (match[2] as string).split(",").map((name) => name.replace(/(\*|:\d+)$/, "")),
  }));
}

/** Every variable a URI template names, in order. */
export const templateVariables = (template: string): string[] => expressionsOf(template).flatMap((expression) => expression.names);

/** The variables a filled URI cannot leave out: a query's (`{?x}`, `{&x}`) may go unsent. */
export const requiredVariables = (template: string): string[] =>
  expressionsOf(template).flatMap((expression) => (expression.operator === "?" || expression.operator === "&" ? [] : expression.names));

const FILE_URI: ArgumentPlan = { roles: { path: "uri" }, fixed: {}, optional: [], spelling: "file-uri" };

function templateClassification(template: string, mapped: ResourceOverride | undefined): Classification {
  if (mapped !== undefined && "exclude" in mapped) return { kind: "excluded", why: mapped.exclude };
  const variables = templateVariables(template);
  const path = mapped?.path ?? (variables.length === 1 ? variables[0] : undefined);
  const operation = mapped?.operation ?? "read";
  const by = mapped === undefined ? "resources" : "mapping";
  if (path === undefined) {
    const why =
      variables.length === 0
        ? "the template has no variable to carry a path"
        : `the template has several variables (${variables.join(", ")}) and the audit cannot tell which carries the path`;
    return { kind: "operation", operation, by, plan: { roles: {}, fixed: {}, optional: [], unplaced: `${why}: name it in the mapping's resources` } };
  }
  return { kind: "operation", operation, by, plan: { roles: { path }, fixed: { ...mapped?.fixed }, optional: [] } };
}

/** `mapped`: the mapping's `resources`, by `resources/read` or template. */
export function resourceSurfaces(resources: McpResources | undefined, excluded: ReadonlyMap<string, string>, mapped: Readonly<Record<string, ResourceOverride>> = {}): OfferedTool[] {
  if (resources === undefined) return [];
  const own = mapped[RESOURCES_READ];
  const reading: Classification =
    own === undefined ? { kind: "operation", operation: "read", plan: FILE_URI, by: "resources" }
    : "exclude" in own ? { kind: "excluded", why: own.exclude }
    : { kind: "operation", operation: own.operation, plan: FILE_URI, by: "mapping" };
  return [
    { name: RESOURCES_READ, classification: reading },
    ...resources.templates.map(({ uriTemplate }) => ({ name: templateSurface(uriTemplate), classification: templateClassification(uriTemplate, mapped[uriTemplate]) })),
  ].map(({ name, classification }) => {
    const why = excluded.get(name);
    return { name, classification: why === undefined ? classification : { kind: "excluded", why } };
  });
}

const OPERATOR_PREFIX: Readonly<Record<string, string>> = { "": "", "+": "", "#": "#", ".": ".", "/": "/", ";": ";", "?": "?", "&": "&" };
const OPERATOR_SEPARATOR: Readonly<Record<string, string>> = { "": ",", "+": ",", "#": ",", ".": ".", "/": "/", ";": ";", "?": "&", "&": "&" };

/**
 * The URI that asks `path` (as the mapping spells it, relative to `root` or absolute): a `file://`
 * URI for `resources/read`; for a template, the variable `plan.roles.path` names filled with the path,
 * the whole absolute path when the template is `file://` and that expression, the path as it is (each
 * name percent-encoded) otherwise, and every other variable with its `plan.fixed` value (left out,
 * the plan of a template of one variable).
 */
export function resourceUri(surface: string, path: string, root: string, placed?: Pick<ArgumentPlan, "roles" | "fixed">): string {
  const template = templateOf(surface);
  if (template === undefined) return fileUri(path, root);
  const [only] = templateVariables(template);
  const plan: Pick<ArgumentPlan, "roles" | "fixed"> = placed ?? { roles: only === undefined ? {} : { path: only }, fixed: {} };
  let uri = "";
  let from = 0;
  for (const expression of expressionsOf(template)) {
    const before = template.slice(from, expression.at);
    from = expression.at + expression.length;
    // `file:///{+path}` and `file://{+path}` alike name the whole path; a template below a directory of
    // its own (`file:///data/{path}`, `notes://{vault}/{+note}`) takes the path as the audit made it.
    if (uri === "" && expression.names.length === 1 && expression.names[0] === plan.roles.path && /^file:\/\/\/?$/.test(before)) {
      uri = fileUri(path, root);
      continue;
    }
    const values = expression.names.flatMap((name) => {
      const value = name === plan.roles.path ? path.split("/").map(encodeURIComponent).join("/") : plan.fixed[name] === undefined ? undefined : encodeURIComponent(String(plan.fixed[name]));
      if (value === undefined) return [];
      return [expression.operator === ";" || expression.operator === "?" || expression.operator === "&" ? `${name}=${value}` : value];
    });
    uri += before + (values.length === 0 ? "" : `${OPERATOR_PREFIX[expression.operator] ?? ""}${values.join(OPERATOR_SEPARATOR[expression.operator] ?? ",")}`);
  }
  return uri + template.slice(from);
}
