/**
 * Which MCP tools play the audit's `read` and `write`, what any other tool does where the kit's own
 * classification (operations/classify.ts) is wrong or silent, which tools are excluded, how the
 * server's resources are asked where a template does not say which variable is the path
 * (resources.ts), and how to
 * talk to them (docs/contract.md, "Auditing an MCP server", documents the file format).
 *
 * Promises: `parseMapping` accepts exactly the documented JSON shape and otherwise throws an Error
 * naming the file and the field that breaks the rule; what it returns is complete (defaults filled
 * in from `FILESYSTEM_SERVER_MAPPING`, the official `@modelcontextprotocol/server-filesystem`).
 * Does not promise: that the named tools exist on a server; the client checks that with `listTools`.
 */
import { readFile } from "node:fs/promises";
import { OPERATIONS, type OperationId, type Role } from "../operations/catalog.js";
import type { ToolOverride } from "../operations/classify.js";
import { type ProtectedPattern, ProtectPatternError, parseProtectPatterns } from "../operations/protected-paths.js";
import { RESOURCES_READ, RESOURCE_OPERATIONS, type ResourceOverride, requiredVariables, templateVariables } from "./resources.js";

export interface McpMapping {
  /** `named`: the mapping file names it, so a server without it is an error; otherwise a server without it plays read with the first tool classified so. */
  read: { tool: string; path: string; named: boolean };
  write: { tool: string; path: string; content: string; named: boolean };
  /** A tool that plays mkdir; `named` as for read and write. */
  mkdir: { tool: string; path: string; named: boolean };
  /** Tools by name: what each plays, or why it is excluded, where the classification is not to be trusted. */
  tools: Readonly<Record<string, ToolOverride>>;
  /** `absolute`: a relative candidate is sent as `<root>/<candidate>` (the raw text, never normalized). */
  paths: "absolute" | "relative";
  /** `chapter`: the server truncates reads the chapter's way, so `truncation.read` applies. */
  truncation: "chapter" | "none";
  /** A text answer matching this regular expression is an error, for servers that do not set `isError`. */
  errorText?: string;
  /** Paths inside the workspace the server promises never to read, change or reveal (gitignore-style; operations/protected-paths.ts). */
  protect?: readonly ProtectedPattern[];
  /** By `resources/read` or URI template: how the server's resources are taken where the audit cannot tell alone (resources.ts). */
  resources?: Readonly<Record<string, ResourceOverride>>;
}

export const FILESYSTEM_SERVER_MAPPING: McpMapping = {
  read: { tool: "read_text_file", path: "path", named: false },
  write: { tool: "write_file", path: "path", content: "content", named: false },
  mkdir: { tool: "create_directory", path: "path", named: false },
  tools: {},
  paths: "absolute",
  truncation: "none",
};

export async function readMapping(file: string): Promise<McpMapping> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new Error(`cannot read the mapping ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return parseMapping(text, file);
}

export function parseMapping(text: string, file: string): McpMapping {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`mapping ${file} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const fail = (rule: string): never => {
    throw new Error(`mapping ${file}: ${rule}`);
  };
  const object = (value: unknown, where: string): Record<string, unknown> =>
    typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : fail(`${where} must be an object`);
  const root = object(json, "the mapping");
  const known = (record: Record<string, unknown>, where: string, keys: readonly string[]) => {
    const unknown = Object.keys(record).filter((key) => !keys.includes(key));
    if (unknown.length > 0) fail(`${where} has unknown field ${unknown.join(", ")} (known: ${keys.join(", ")})`);
  };
  known(root, "the mapping", ["read", "write", "mkdir", "tools", "paths", "truncation", "errorText", "protect", "resources"]);
  const name = (record: Record<string, unknown>, key: string, where: string, fallback: string): string => {
    const value = record[key] ?? fallback;
    return typeof value === "string" && value !== "" ? value : fail(`${where}.${key} must be a non-empty string`);
  };
  const oneOf = <T extends string>(key: string, values: readonly T[], fallback: T): T => {
    const value = root[key] ?? fallback;
    return values.includes(value as T) ? (value as T) : fail(`${key} must be one of ${values.map((v) => JSON.stringify(v)).join(", ")}`);
  };
  const defaults = FILESYSTEM_SERVER_MAPPING;
  const read = object(root.read ?? {}, "read");
  known(read, "read", ["tool", "path"]);
  const write = object(root.write ?? {}, "write");
  known(write, "write", ["tool", "path", "content"]);
  const mkdir = object(root.mkdir ?? {}, "mkdir");
  known(mkdir, "mkdir", ["tool", "path"]);
  const errorText = root.errorText;
  if (errorText !== undefined) {
    if (typeof errorText !== "string") fail("errorText must be a string (a regular expression)");
    try {
      new RegExp(errorText as string);
    } catch (error) {
      fail(`errorText is not a regular expression: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  let protect: ProtectedPattern[] | undefined;
  if (root.protect !== undefined) {
    if (!Array.isArray(root.protect) || root.protect.some((pattern) => typeof pattern !== "string")) fail('protect must be a list of patterns (strings, such as ".git")');
    try {
      protect = parseProtectPatterns(root.protect as string[], `mapping ${file}: protect`);
    } catch (error) {
      if (!(error instanceof ProtectPatternError)) throw error;
      throw new Error(error.message);
    }
  }
  const tools = Object.fromEntries(
    Object.entries(object(root.tools ?? {}, "tools")).map(([tool, value]): [string, ToolOverride] => {
      const where = `tools.${tool}`;
      const entry = object(value, where);
      if (entry.exclude !== undefined) {
        known(entry, where, ["exclude"]);
        return [tool, { exclude: name(entry, "exclude", where, "") }];
      }
      known(entry, where, ["operation", "arguments", "fixed", "patchForm", "spelling"]);
      const ids = OPERATIONS.map((known) => known.id);
      if (!ids.includes(entry.operation as OperationId)) fail(`${where}.operation must be one of ${ids.map((id) => JSON.stringify(id)).join(", ")} (or give "exclude" with the reason)`);
      const args = object(entry.arguments ?? {}, `${where}.arguments`);
      known(args, `${where}.arguments`, ["path", "paths", "source", "destination", "pattern", "content", "oldText", "newText", "archive", "edits", "items", "patch"]);
      for (const role of Object.keys(args)) name(args, role, `${where}.arguments`, "");
      const choice = <T extends string>(key: string, values: readonly T[]): T | undefined =>
        entry[key] === undefined ? undefined : values.includes(entry[key] as T) ? (entry[key] as T) : fail(`${where}.${key} must be one of ${values.map((v) => JSON.stringify(v)).join(", ")}`);
      const patchForm = choice("patchForm", ["unified", "envelope"] as const);
      const spelling = choice("spelling", ["file-uri"] as const);
      return [
        tool,
        {
          operation: entry.operation as OperationId,
          arguments: args as Partial<Record<Role | "edits" | "items" | "patch", string>>,
          fixed: object(entry.fixed ?? {}, `${where}.fixed`),
          ...(patchForm === undefined ? {} : { patchForm }),
          ...(spelling === undefined ? {} : { spelling }),
        },
      ];
    }),
  );
  return {
    read: { tool: name(read, "tool", "read", defaults.read.tool), path: name(read, "path", "read", defaults.read.path), named: root.read !== undefined },
    write: {
      tool: name(write, "tool", "write", defaults.write.tool),
      path: name(write, "path", "write", defaults.write.path),
      content: name(write, "content", "write", defaults.write.content),
      named: root.write !== undefined,
    },
    mkdir: { tool: name(mkdir, "tool", "mkdir", defaults.mkdir.tool), path: name(mkdir, "path", "mkdir", defaults.mkdir.path), named: root.mkdir !== undefined },
    tools,
    paths: oneOf("paths", ["absolute", "relative"] as const, defaults.paths),
    truncation: oneOf("truncation", ["chapter", "none"] as const, defaults.truncation),
    ...(errorText === undefined ? {} : { errorText: errorText as string }),
    ...(protect === undefined ? {} : { protect }),
    ...(root.resources === undefined ? {} : { resources: parseResources(object(root.resources, "resources"), fail, object) }),
  };
}

/**
 * The mapping's `resources`: by `resources/read` or a template as the server lists it, `exclude` with
 * the reason, or the `operation` (read by default), the variable that carries the `path` (the
 * template's only one by default), a value in `fixed` for every other variable a URI cannot leave out,
 * and `paths` (the mapping's own by default).
 */
function parseResources(
  entries: Record<string, unknown>,
  fail: (rule: string) => never,
  object: (value: unknown, where: string) => Record<string, unknown>,
): Record<string, ResourceOverride> {
  return Object.fromEntries(
    Object.entries(entries).map(([name, value]): [string, ResourceOverride] => {
      const where = `resources.${name}`;
      const variables = templateVariables(name);
      if (name !== RESOURCES_READ && variables.length === 0) fail(`${where}: a key is "${RESOURCES_READ}" or a URI template as the server lists it, with a {variable}`);
      const entry = object(value, where);
      if (entry.exclude !== undefined) {
        if (Object.keys(entry).length > 1) fail(`${where} has "exclude" and other fields: an excluded resource is never asked`);
        if (typeof entry.exclude !== "string" || entry.exclude === "") fail(`${where}.exclude must be a non-empty string (the reason)`);
        return [name, { exclude: entry.exclude as string }];
      }
      const fields = name === RESOURCES_READ ? ["operation"] : ["operation", "path", "fixed", "paths"];
      const unknown = Object.keys(entry).filter((key) => !fields.includes(key));
      if (unknown.length > 0) fail(`${where} has unknown field ${unknown.join(", ")} (known: ${fields.join(", ")}, or "exclude" with the reason)${name === RESOURCES_READ ? `: ${RESOURCES_READ} is asked the file:// URI of the path` : ""}`);
      const operation = entry.operation ?? "read";
      if (!RESOURCE_OPERATIONS.includes(operation as (typeof RESOURCE_OPERATIONS)[number])) {
        fail(`${where}.operation must be one of ${RESOURCE_OPERATIONS.map((id) => JSON.stringify(id)).join(", ")}: a resource is asked one path, by its URI`);
      }
      const played = operation as (typeof RESOURCE_OPERATIONS)[number];
      if (name === RESOURCES_READ) return [name, { operation: played, fixed: {} }];
      const listed = `its variables: ${variables.join(", ")}`;
      if (entry.path !== undefined && (typeof entry.path !== "string" || !variables.includes(entry.path))) fail(`${where}.path must name the variable of the template that carries the path (${listed})`);
      if (entry.path === undefined && variables.length > 1) fail(`${where}.path must name the variable of the template that carries the path: it has several (${listed})`);
      const path = (entry.path as string | undefined) ?? (variables[0] as string);
      const fixed = object(entry.fixed ?? {}, `${where}.fixed`);
      for (const [variable, given] of Object.entries(fixed)) {
        if (!variables.includes(variable) || variable === path) fail(`${where}.fixed.${variable} is not another variable of the template (${listed}; the path goes in ${path})`);
        if (typeof given !== "string") fail(`${where}.fixed.${variable} must be a string (the variable's value, sent in every URI)`);
      }
      const missing = requiredVariables(name).filter((variable) => variable !== path && fixed[variable] === undefined);
      if (missing.length > 0) fail(`${where}.fixed must give ${missing.join(", ")} a value: a URI without it names no resource`);
      const paths = entry.paths;
      if (paths !== undefined && paths !== "absolute" && paths !== "relative") fail(`${where}.paths must be one of "absolute", "relative"`);
      return [name, { operation: played, path, fixed: fixed as Record<string, string>, ...(paths === undefined ? {} : { paths: paths as "absolute" | "relative" }) }];
    }),
  );
}
