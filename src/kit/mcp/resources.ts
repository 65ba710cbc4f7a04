/**
 * An MCP server's resources as surfaces the audit attacks: `resources/read` with a `file://` URI of
 * every path the read property aims, and each resource template with its first expression filled
 * with the path. Each plays `read`, so `containment.read` judges it with the same canaries, and the
 * coverage table gives each a row: a server's resources are never left unasked.
 *
 * Promises: `resourceSurfaces` lists `resources/read` for a server that declares resources, and one
 * surface per template (`resource template <uriTemplate>`), excluded when `--exclude-tool` or the
 * mapping names it; `resourceUri` writes the path raw (each name percent-encoded, `..` kept: the
 * server meets it itself).
 * Does not promise: to read a resource the server names by a scheme of its own (`db://…`) as a path;
 * a template that is no `file://` URI is filled with the path as the audit made it.
 */
import type { Classification } from "../operations/classify.js";
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

const READS: Classification = { kind: "operation", operation: "read", plan: { roles: { path: "uri" }, fixed: {}, optional: [], spelling: "file-uri" }, by: "resources" };

export function resourceSurfaces(resources: McpResources | undefined, excluded: ReadonlyMap<string, string>): OfferedTool[] {
  if (resources === undefined) return [];
  return [RESOURCES_READ, ...resources.templates.map(({ uriTemplate }) => templateSurface(uriTemplate))].map((name) => {
    const why = excluded.get(name);
    return { name, classification: why === undefined ? READS : { kind: "excluded", why } };
  });
}

/**
 * The URI that reads `path` (as the mapping spells it, relative to `root` or absolute): a `file://`
 * URI for `resources/read`; a template's first expression (`{path}`, `{+path}`) filled with the whole
 * absolute path for a template that is `file://` and the expression, with the path as it is (each
 * name percent-encoded) otherwise.
 */
export function resourceUri(surface: string, path: string, root: string): string {
  const uri = fileUri(path, root);
  const template = templateOf(surface);
  if (template === undefined) return uri;
  const expression = /\{[^}]*\}/.exec(template);
  if (expression === null) return template;
  const before = template.slice(0, expression.index);
  const after = template.slice(expression.index + expression[0].length);
  // `file:///{+path}` and `file://{+path}` alike name the whole path; a template below a directory of
  // its own (`file:///data/{path}`, `notes://{name}`) takes the path as the audit made it.
  if (/^file:\/\/\/?$/.test(before)) return `${uri}${after}`;
  return `${before}${path.split("/").map(encodeURIComponent).join("/")}${after}`;
}
