/**
 * An MCP server as an audit target: its tools, named by the mapping, play `read` and `write`; `bash`
 * is the audit's own shell beside the server (sequences change the workspace with it, never with the
 * server's tools).
 *
 * Promises: `prepare` starts the server once on a scratch directory and checks with `listTools` that
 * the mapped read and write exist (and mkdir, when the mapping file names it; otherwise it notes
 * whether the default one does), throwing an Error that names the missing tool and the ones there are.
 * During the audit there is one server per workspace root, started at the first call on that root
 * and kept for that root's later cases; a server whose root's folder was removed (its sandbox is
 * gone) is closed when the next one starts, and `dispose` closes them all. Properties that cannot
 * apply to a process (`isInside` and `workspacePath` are not exported, fs faults cannot be injected,
 * inputs JSON cannot carry, the chapter's messages and, unless the mapping says so, its truncation)
 * are listed in `notApplicable` with the reason. A server that fails during the audit is kept in
 * `serverFailure`, and the audit cannot end green (see command.ts).
 * Does not promise: to send a path the way every agent would; the mapping says how (absolute paths
 * are the root and the candidate joined by "/", never normalized, so the server meets `..` itself).
 */
import { access, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { schema } from "../../gates/schema.js";
import type { Tool, ToolResult } from "../../gates/tool.js";
import { workspaceBoundary } from "../../gates/workspace-path.js";
import { bashTool } from "../../tools/bash.js";
import type { AuditTarget } from "../audit/target.js";
import { type McpConnection, McpServerError, connectServer } from "./client.js";
import type { McpMapping } from "./mapping.js";

export interface McpAuditTarget extends AuditTarget {
  prepare(): Promise<void>;
  /** The mapping's mkdir tool for a root, when the server listed it at `prepare` (the race calls it). */
  mkdirTool(root: string): Tool | undefined;
  /** Starts the root's server now rather than at its first call (for a timed run such as a race). */
  start(root: string): Promise<void>;
  dispose(): Promise<void>;
  /** The first error that stopped a server from answering, if any. */
  readonly serverFailure: string | undefined;
}

const NO_EXPORT = "a server process exports no";

export function notApplicableOverMcp(mapping: McpMapping): ReadonlyMap<string, string> {
  return new Map([
    ["fields.tools", "MCP arguments are JSON, so the property's inputs that JSON cannot carry (boxed strings, functions, prototypes) would reach the server changed"],
    ["conformance.fields", "an MCP server answers malformed arguments with its own schema errors; the chapter's exact messages are not its contract"],
    ["isInside.posix", `${NO_EXPORT} isInside function`],
    ["isInside.win32", `${NO_EXPORT} isInside function`],
    ["containment.workspacePath", `${NO_EXPORT} workspacePath function (containment.read and containment.write judge its tools)`],
    ["precision.workspacePath", `${NO_EXPORT} workspacePath function`],
    ["faults.workspacePath", `${NO_EXPORT} workspacePath function`],
    ["faults.tools", "the audit cannot inject fs faults into another process"],
    ["faults.permissions", "the audit cannot serve another process's filesystem through memfs"],
    ...(["bashLimits.output", "bashLimits.timeout"] as const).map(
      (id) => [id, "the mapping names no bash tool: bash over MCP is the audit's own shell beside the server, so its limits would be this package's"] as const,
    ),
    ["corpus.mcp", `${NO_EXPORT} isInside function (the corpus's lexical rows judge one)`],
    ...(mapping.truncation === "none"
      ? (["truncation.read", "conformance.truncation"] as const).map((id) => [id, 'the mapping says the server does not truncate reads ("truncation": "none")'] as const)
      : []),
  ]);
}

export function mcpTarget(words: readonly string[], mapping: McpMapping): McpAuditTarget {
  const servers = new Map<string, Promise<McpConnection>>();
  let serverFailure: string | undefined;
  let listedTools: readonly string[] = [];
  const errorText = mapping.errorText === undefined ? undefined : new RegExp(mapping.errorText);

  const required = [["read", mapping.read.tool], ["write", mapping.write.tool], ...(mapping.mkdir.named ? [["mkdir", mapping.mkdir.tool] as const] : [])] as const;
  const requireTools = (connection: McpConnection) => {
    for (const [role, tool] of required)
      if (!connection.toolNames.includes(tool))
        throw new McpServerError(`the MCP server has no tool "${tool}" (the mapping's ${role}.tool); it has: ${connection.toolNames.join(", ") || "none"}`);
  };

  // A root can be missing for a moment (a case's root alias is made anew, a sequence swaps the root);
  // the folder it lives in goes only with its sandbox.
  const closeStale = async () => {
    for (const [root, server] of servers) {
      const gone = await access(dirname(root)).then(
        () => false,
        () => true,
      );
      if (!gone) continue;
      servers.delete(root);
      await server.then((connection) => connection.close()).catch(() => {});
    }
  };

  const serverFor = (root: string): Promise<McpConnection> => {
    let server = servers.get(root);
    if (server === undefined) {
      server = closeStale().then(async () => {
        const connection = await connectServer(words, root);
        requireTools(connection);
        return connection;
      });
      servers.set(root, server);
    }
    return server;
  };

  const call = async (root: string, tool: string, args: Record<string, unknown>): Promise<ToolResult> => {
    try {
      const answer = await (await serverFor(root)).call(tool, args);
      return { content: answer.text, isError: answer.isError || errorText?.test(answer.text) === true };
    } catch (error) {
      serverFailure ??= error instanceof Error ? error.message : String(error);
      throw error;
    }
  };

  const pathFor = (root: string, path: unknown): unknown =>
    mapping.paths === "absolute" && typeof path === "string" && !isAbsolute(path) ? `${root}/${path}` : path;

  /** The input's own fields pass through (a `root` or `cwd` in it reaches the server); the mapped names replace `path` and `content`. */
  const argumentsFor = (root: string, input: unknown, names: { path: string; content?: string }): Record<string, unknown> => {
    const { path, content, ...rest } = typeof input === "object" && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
    return { ...rest, [names.path]: pathFor(root, path), ...(names.content === undefined ? {} : { [names.content]: content }) };
  };

  const mcpTool = (root: string, name: "read" | "write" | "mkdir"): Tool => ({
    spec: { name, description: `${name} through the MCP tool ${mapping[name].tool}`, inputSchema: schema(name === "write" ? ["path", "content"] : ["path"], {}) },
    execute: (input) => call(root, mapping[name].tool, argumentsFor(root, input, mapping[name])),
  });

  return {
    label: `mcp: ${words.join(" ")}`,
    notApplicable: notApplicableOverMcp(mapping),
    createWorkspaceTools: (root) => [mcpTool(root, "read"), mcpTool(root, "write"), bashTool(workspaceBoundary(root))],
    mkdirTool: (root) => (listedTools.includes(mapping.mkdir.tool) ? mcpTool(root, "mkdir") : undefined),
    async start(root) {
      await serverFor(root);
    },
    get serverFailure() {
      return serverFailure;
    },
    async prepare() {
      const scratch = await realpath(await mkdtemp(join(tmpdir(), "workspace-gates-mcp-probe-")));
      try {
        const connection = await connectServer(words, scratch);
        try {
          requireTools(connection);
          listedTools = connection.toolNames;
        } finally {
          await connection.close();
        }
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
    },
    async dispose() {
      const open = [...servers.values()];
      servers.clear();
      await Promise.all(open.map((server) => server.then((connection) => connection.close()).catch(() => {})));
    },
  };
}

/** A command line whose words after `--` are an MCP server's command: the flags before, the command after. */
export function splitAtServerCommand(argv: readonly string[]): { flags: string[]; command: string[] | undefined } {
  const cut = argv.indexOf("--");
  return cut < 0 ? { flags: [...argv], command: undefined } : { flags: argv.slice(0, cut), command: argv.slice(cut + 1) };
}
