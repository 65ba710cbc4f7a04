/**
 * An MCP server as an audit target: every tool it lists, classified (operations/classify.ts, with the
 * mapping's corrections), and its resources (`resources/read` and each template: resources.ts), make
 * its surface; the mapping's read and write also play the `read` and
 * `write` of the properties that need one of each, and `bash` is the audit's own shell beside the
 * server (sequences change the workspace with it, never with the server's tools).
 *
 * Promises: `prepare` starts the server once on a scratch directory, keeps what `tools/list` answered
 * and checks that the tools the mapping file names exist (read and write also when it names none: the
 * official server's, or else the first tool classified so), throwing an Error that names the missing
 * tool and the ones there are. During the audit there is one server per workspace root, started at
 * the first call on that root, or ahead of it by `warm`, and kept for that root's later cases; a server
 * that exits or leaves a call unanswered is replaced by a fresh one at the root's next call, and the
 * call that met it throws `TargetStopped`, which the runner judges (audit/runner/run.ts); a server whose
 * root's folder was removed (its sandbox is gone) is closed when the next one starts, and `dispose`
 * closes them all, ending at once any still starting (as the `signal` given does). Properties that cannot apply to a process (`isInside` and `workspacePath` are not
 * exported, fs faults cannot be injected, inputs JSON cannot carry, the chapter's messages and, unless
 * the mapping says so, its truncation) are listed in `notApplicable` with the reason. A server that
 * cannot be started again during the audit is kept in `serverFailure`, and the audit cannot end green,
 * unless its root was not a directory then (`RootGone`): the call answers an error, as in process.
 * Does not promise: to send a path the way every agent would; the mapping says how (absolute paths
 * are the root and the candidate joined by "/", never normalized, so the server meets `..` itself).
 */
import { statSync } from "node:fs";
import { access, mkdtemp, realpath } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { schema } from "../../gates/schema.js";
import type { Tool, ToolResult } from "../../gates/tool.js";
import { workspaceBoundary } from "../../gates/workspace-path.js";
import { bashTool } from "../../tools/bash.js";
import { type Classification, type ToolDescription, type ToolOverride, argumentsFor, classifyTool } from "../operations/classify.js";
import { type OfferedTool, type OperationTool, type Surface, awaitingTarget, recordCall, startingServer, surface, transcribe } from "../operations/surface.js";
import { type AuditTarget, TargetStopped } from "../operations/target.js";
import { CALL_TIMEOUT_MS, type McpAnswer, type McpConnection, McpServerError, START_TIMEOUT_MS, connectServer } from "./client.js";
import { isResource, resourceSurfaces, resourceUri, templateOf } from "./resources.js";
import type { McpMapping } from "./mapping.js";
import { removeTree } from "../sandbox/remove.js";
import { serverEnvironmentOf } from "../sandbox/sandbox.js";

export interface McpAuditTarget extends AuditTarget {
  prepare(): Promise<void>;
  /** Every tool the server listed at `prepare`, classified. */
  readonly offered: readonly OfferedTool[];
  /** Starts the root's server now rather than at its first call (for a timed run such as a race). */
  start(root: string): Promise<void>;
  /** Starts the roots' servers in the background, a few at a time, so that the cases that come to them find them running. */
  warm(roots: readonly string[]): void;
  dispose(): Promise<void>;
  /** The first error that kept a server from being started again during the audit, if any. */
  readonly serverFailure: string | undefined;
  /** The servers started so far and how long their starts took together, for the report of where the time went. */
  readonly starts: { count: number; ms: number };
}

/** A call of a server whose calls take `latencyMs` as a rule may take this long before it counts as hung. */
export function callTimeoutFor(latencyMs: number | undefined): number {
  return Math.min(MOST_CALL_TIMEOUT_MS, Math.max(CALL_TIMEOUT_MS, 10 * (latencyMs ?? 0)));
}

/** However slow its calls, one that has not answered in two minutes hangs. */
const MOST_CALL_TIMEOUT_MS = 120_000;

const NO_EXPORT = "a server process exports no";

/**
 * A server that could not start because its root was not a directory then: a case took the root away
 * (moved, removed, swapped for a link to nothing), and a server that checks its root at start exits.
 * Not the server's own trouble: the call fails, and the verdict still stands.
 */
class RootGone extends McpServerError {}

/** Servers started ahead at once: the case under way needs the machine's cores too. */
const WARM_AT_ONCE = 2;

export function notApplicableOverMcp(mapping: McpMapping): ReadonlyMap<string, string> {
  return new Map([
    ["fields.tools", "MCP arguments are JSON, so the property's inputs that JSON cannot carry (boxed strings, functions, prototypes) would reach the server changed"],
    ["conformance.fields", "an MCP server answers malformed arguments with its own schema errors; the reference's exact messages are not its contract"],
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
    ["sequences.swapInCall", "the swap is placed by trapping this process's file-system calls, and a server makes its own: race it with `toctou --mcp`"],
    ...(mapping.truncation === "none"
      ? (["truncation.read", "conformance.truncation"] as const).map((id) => [id, 'the mapping says the server does not truncate reads ("truncation": "none")'] as const)
      : []),
  ]);
}

/**
 * The mapping's own words for its read, write and mkdir tools, as corrections of the classification;
 * a role no mapping named keeps the official server's tool name, and says so (`--list-tools`).
 */
function overridesOf(mapping: McpMapping): Record<string, ToolOverride> {
  const role = ({ tool, named }: { tool: string; named: boolean }, operation: "read" | "write" | "mkdir", args: Record<string, string>): [string, ToolOverride] => [
    tool,
    { operation, arguments: args, fixed: {}, ...(named ? {} : { from: "official" as const }) },
  ];
  return {
    ...Object.fromEntries([
      role(mapping.mkdir, "mkdir", { path: mapping.mkdir.path }),
      role(mapping.read, "read", { path: mapping.read.path }),
      role(mapping.write, "write", { path: mapping.write.path, content: mapping.write.content }),
    ]),
    ...mapping.tools,
  };
}

/** The tools as the audit sees them: each classified, the mapping's word taken over the kit's guess, exclusions by name. */
export function classifyServerTools(tools: readonly ToolDescription[], mapping: McpMapping, excluded: ReadonlyMap<string, string>): OfferedTool[] {
  const overrides = overridesOf(mapping);
  return tools.map((tool) => {
    const why = excluded.get(tool.name);
    const classification: Classification = why !== undefined ? { kind: "excluded", why } : classifyTool(tool, overrides[tool.name]);
    return { name: tool.name, classification };
  });
}

/**
 * `signal`: the user's Ctrl-C; once it aborts, every start under way ends at once, and none counts as
 * a server that failed (`serverFailure`).
 */
export function mcpTarget(words: readonly string[], mapping: McpMapping, excluded: ReadonlyMap<string, string> = new Map(), { signal }: { signal?: AbortSignal } = {}): McpAuditTarget {
  // Aborted by the user's signal, or by `dispose`: a server still starting then is not waited for.
  const stopping = new AbortController();
  if (signal?.aborted === true) stopping.abort();
  signal?.addEventListener("abort", () => stopping.abort(), { once: true });
  const servers = new Map<string, Promise<McpConnection>>();
  let serverFailure: string | undefined;
  let offered: OfferedTool[] = [];
  // The tools that play the properties' read and write: the mapping's, or the first classified so.
  let primary = { read: mapping.read, write: mapping.write };
  const errorText = mapping.errorText === undefined ? undefined : new RegExp(mapping.errorText);

  // Servers being closed, which `dispose` waits for.
  const closing = new Set<Promise<void>>();
  const close = (server: Promise<McpConnection>) => {
    const closed = server.then((connection) => connection.close()).catch(() => {});
    closing.add(closed);
    void closed.finally(() => closing.delete(closed));
  };

  // A root can be missing for a moment (a case's root alias is made anew, a sequence swaps the root);
  // the folder it lives in goes only with its sandbox. The servers looked at are those there when the
  // start began, and none is waited for: a server still starting may be starting on a root that is
  // gone too, and may itself be looking for stale servers.
  const closeStale = async () => {
    for (const [root, server] of [...servers]) {
      const gone = await access(dirname(root)).then(
        () => false,
        () => true,
      );
      if (!gone || servers.get(root) !== server) continue;
      servers.delete(root);
      close(server);
    }
  };

  const starts = { count: 0, ms: 0 };

  /** A server for `root`; `ahead`: started before any case asked, so a failure only means the next call starts it again. */
  const startFor = (root: string, ahead = false): Promise<McpConnection> => {
    const server = closeStale().then(async () => {
      const began = performance.now();
      try {
        return await connectServer(words, root, START_TIMEOUT_MS, { signal: stopping.signal, environment: serverEnvironment(root) });
      } catch (error) {
        if (statSync(root, { throwIfNoEntry: false })?.isDirectory() !== true) throw new RootGone(`the MCP server cannot start on ${root}: it is no longer a directory`);
        throw error;
      } finally {
        starts.count += 1;
        starts.ms += performance.now() - began;
      }
    });
    servers.set(root, server);
    server.catch((error: unknown) => {
      if (ahead || error instanceof RootGone || stopping.signal.aborted) {
        if (servers.get(root) === server) servers.delete(root);
      } else {
        // A server that cannot be started for a case leaves nothing to judge by: no verdict stands.
        serverFailure ??= error instanceof Error ? error.message : String(error);
      }
    });
    return server;
  };

  /** The root's server: the one there is, or a fresh one when there is none, it failed to start ahead, or it exited. */
  const serverFor = async (root: string): Promise<{ entry: Promise<McpConnection>; connection: McpConnection }> => {
    const entry = servers.get(root);
    if (entry !== undefined) {
      const connection = await entry.catch(() => undefined);
      if (connection !== undefined && !connection.exited) return { entry, connection };
      // Another call of the root's has already replaced it.
      if (servers.get(root) !== entry && servers.has(root)) return serverFor(root);
      close(entry);
    }
    const fresh = startFor(root);
    return { entry: fresh, connection: await fresh };
  };

  const call = (root: string, tool: string, args: Record<string, unknown>): Promise<ToolResult> =>
    request(root, tool, args, (connection, timeoutMs) => connection.call(tool, args, timeoutMs));

  /** One request of the root's server, counted and transcribed under `name` with `args`: a tool's call, or a resource's read. */
  const request = async (root: string, name: string, args: Record<string, unknown>, ask: (connection: McpConnection, timeoutMs: number) => Promise<McpAnswer>): Promise<ToolResult> => {
    recordCall(name);
    transcribe({ via: "mcp", name, args: [args] });
    let served: Awaited<ReturnType<typeof serverFor>>;
    try {
      served = await startingServer(serverFor(root));
    } catch (error) {
      // As a tool in process fails on a root that is gone, the call fails; what took the root away is the case's judge's to see.
      if (error instanceof RootGone) return { content: error.message, isError: true };
      throw error;
    }
    const { entry, connection } = served;
    try {
      const answer = await awaitingTarget(ask(connection, callTimeoutFor(target.latencyMs)));
      return { content: answer.text, isError: answer.isError || errorText?.test(answer.text) === true };
    } catch (error) {
      // The root's next call meets a fresh server: a hung one is ended, an exited one is gone.
      if (error instanceof TargetStopped && servers.get(root) === entry) {
        servers.delete(root);
        close(entry);
      }
      throw error;
    }
  };

  const pathFor = (root: string) => (path: string) => (mapping.paths === "absolute" && !isAbsolute(path) ? `${root}/${path}` : path);

  /** The input's own fields pass through (a `root` or `cwd` in it reaches the server); the mapped names replace `path` and `content`. */
  const passThrough = (root: string, input: unknown, names: { path: string; content?: string }): Record<string, unknown> => {
    const { path, content, ...rest } = typeof input === "object" && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
    return { ...rest, [names.path]: typeof path === "string" ? pathFor(root)(path) : path, ...(names.content === undefined ? {} : { [names.content]: content }) };
  };

  const roleTool = (root: string, name: "read" | "write"): Tool => ({
    spec: { name, description: `${name} through the MCP tool ${primary[name].tool}`, inputSchema: schema(name === "write" ? ["path", "content"] : ["path"], {}) },
    execute: (input) => call(root, primary[name].tool, passThrough(root, input, primary[name])),
  });

  const surfaceFor = (root: string): Surface =>
    surface(
      offered.map((tool): OfferedTool | OperationTool => {
        const { classification } = tool;
        if (classification.kind !== "operation") return tool;
        if (isResource(tool.name)) {
          // A template the mapping places says whether its path goes absolute; the mapping's paths otherwise.
          const mapped = mapping.resources?.[templateOf(tool.name) ?? ""];
          const paths = (mapped !== undefined && "paths" in mapped ? mapped.paths : undefined) ?? mapping.paths;
          return { ...tool, classification, call: (input) => {
            const path = input.path ?? "";
            const uri = resourceUri(tool.name, paths === "absolute" && !isAbsolute(path) ? `${root}/${path}` : path, root, classification.plan);
            return request(root, tool.name, { uri }, (connection, timeoutMs) => connection.readResource(uri, timeoutMs));
          } };
        }
        return { ...tool, classification, call: (input) => call(root, tool.name, argumentsFor(classification.plan, input, pathFor(root), root)) };
      }),
    );

  const warming: string[] = [];
  let warmers = 0;
  const warmNext = () => {
    while (warmers < WARM_AT_ONCE && warming.length > 0) {
      const root = warming.shift() as string;
      if (servers.has(root)) continue;
      warmers += 1;
      void startFor(root, true)
        .catch(() => {})
        .finally(() => {
          warmers -= 1;
          warmNext();
        });
    }
  };

  const target: McpAuditTarget = {
    label: `mcp: ${words.join(" ")}`,
    notApplicable: notApplicableOverMcp(mapping),
    excluded,
    ...(mapping.protect === undefined ? {} : { protect: mapping.protect }),
    createWorkspaceTools: (root) => [roleTool(root, "read"), roleTool(root, "write"), bashTool(workspaceBoundary(root))],
    surface: surfaceFor,
    get offered() {
      return offered;
    },
    async start(root) {
      await serverFor(root);
    },
    warm(roots) {
      warming.push(...roots.filter((root) => !servers.has(root) && !warming.includes(root)));
      warmNext();
    },
    get serverFailure() {
      return serverFailure;
    },
    starts,
    async prepare() {
      const scratch = await realpath(await mkdtemp(join(tmpdir(), "workspace-gates-mcp-probe-")));
      try {
        const connection = await connectServer(words, scratch, START_TIMEOUT_MS, { signal: stopping.signal });
        try {
          offered = [...classifyServerTools(connection.tools, mapping, excluded), ...resourceSurfaces(connection.resources, excluded, mapping.resources)];
          primary = { read: primaryTool("read", mapping.read, offered), write: primaryTool("write", mapping.write, offered) };
          if (mapping.mkdir.named) requireListed("mkdir", mapping.mkdir.tool, offered);
          for (const name of excluded.keys()) if (!offered.some((tool) => tool.name === name)) throw new McpServerError(`--exclude-tool names "${name}", which the MCP server does not list; it has: ${listed(offered)}`);
        } finally {
          await connection.close();
        }
      } finally {
        removeTree(scratch);
      }
    },
    async dispose() {
      stopping.abort();
      for (const server of servers.values()) close(server);
      servers.clear();
      warming.length = 0;
      await Promise.all(closing);
    },
  };
  return target;
}

const listed = (offered: readonly OfferedTool[]) => offered.map((tool) => tool.name).join(", ") || "none";

function requireListed(role: string, tool: string, offered: readonly OfferedTool[]): void {
  if (!offered.some((candidate) => candidate.name === tool)) throw new McpServerError(`the MCP server has no tool "${tool}" (the mapping's ${role}.tool); it has: ${listed(offered)}`);
}

/** The tool that plays `role` for the properties that need one: the mapping's when it names one or the server has it, else the first classified so. */
function primaryTool<T extends { tool: string; path: string; named: boolean }>(role: "read" | "write", mapped: T, offered: readonly OfferedTool[]): T {
  if (mapped.named || offered.some((tool) => tool.name === mapped.tool)) {
    requireListed(role, mapped.tool, offered);
    return mapped;
  }
  const found = offered.find((tool) => tool.classification.kind === "operation" && tool.classification.operation === role);
  if (found === undefined || found.classification.kind !== "operation") {
    throw new McpServerError(`the MCP server has no tool "${mapped.tool}" and none that the audit classifies as ${role}; name one in the mapping (${role}.tool); it has: ${listed(offered)}`);
  }
  const { roles } = found.classification.plan;
  return { ...mapped, tool: found.name, path: roles.path ?? mapped.path, ...(role === "write" ? { content: roles.content ?? "content" } : {}) };
}

/**
 * What a server started on `root` is given besides the audit's own environment: on a sandbox's root,
 * a `HOME` and a `TMPDIR` of the sandbox's (sandbox.ts, `serverEnvironmentOf`), so a server that
 * reaches into its home reaches a canary, never the home of the user who runs the audit; and npm's
 * cache where it was, so `npx` finds the packages it has (a cache under the new home would be empty).
 * On any other root (the scratch directory `prepare` lists the tools on), nothing.
 */
export function serverEnvironment(root: string): Record<string, string> {
  const sandbox = serverEnvironmentOf(root);
  if (sandbox === undefined) return {};
  return { ...sandbox, npm_config_cache: process.env.npm_config_cache ?? join(homedir(), ".npm") };
}

/** A command line whose words after `--` are an MCP server's command: the flags before, the command after. */
export function splitAtServerCommand(argv: readonly string[]): { flags: string[]; command: string[] | undefined } {
  const cut = argv.indexOf("--");
  return cut < 0 ? { flags: [...argv], command: undefined } : { flags: argv.slice(0, cut), command: argv.slice(cut + 1) };
}
