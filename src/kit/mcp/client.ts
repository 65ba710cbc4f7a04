/**
 * One MCP server process over stdio, driven by the official SDK client: the kit's only MCP client.
 *
 * Promises: `connectServer` starts the command with `{root}` replaced by the root (or the root
 * appended when no word holds the placeholder), initializes and lists the tools (names, descriptions,
 * input schemas), and the resources and resource templates of a server that declares resources, within
 * `START_TIMEOUT_MS`, and otherwise throws `McpServerError` with the end of the
 * server's stderr, leaving no process. `call` answers `{ text, isError }`: the text is everything the
 * result shows (`answerText`), `isError` from the result or a JSON-RPC error answer; `readResource`
 * answers a resource's contents the same way; a server that
 * exits, or does not answer within `CALL_TIMEOUT_MS`, makes `call` throw `TargetStopped`, never a
 * quiet error answer (a dead server refuses everything, which would pass every containment property),
 * its message naming how the process ended (its exit status or signal) and the end of its stderr;
 * the audit gives a slow server's calls more than `CALL_TIMEOUT_MS` (mcp/target.ts).
 * `close` ends the server and, on Linux, every process it started, in a bounded time; a start whose
 * `signal` aborts ends so too, at once, throwing `McpServerError`.
 * Does not promise: anything about what the server does with the files; that is what the audit checks.
 */
import type { ChildProcess } from "node:child_process";
import { readFile, readdir } from "node:fs/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { ToolDescription } from "../operations/classify.js";
import { TargetStopped } from "../operations/target.js";

/** Room for `npx -y` to fetch a package on the first start. */
export const START_TIMEOUT_MS = 60_000;
export const CALL_TIMEOUT_MS = 20_000;
export const ROOT_PLACEHOLDER = "{root}";
const STDERR_TAIL_CHARS = 2_000;

/** How an error of a server that could not be started begins: a call that met one judged nothing. */
export const SERVER_DID_NOT_START = "the MCP server did not start";

/** The server could not be started, or lacks what the mapping names: the audit cannot judge it. */
export class McpServerError extends Error {}

export interface McpAnswer {
  text: string;
  isError: boolean;
}

/** What a server offers as resources: the ones `resources/list` names, and the templates a URI is made from. */
export interface McpResources {
  listed: readonly { uri: string; name: string }[];
  templates: readonly { uriTemplate: string; name: string }[];
}

export interface McpConnection {
  readonly pid: number | undefined;
  /** What `tools/list` answered: each tool's name, description and input schema. */
  readonly tools: readonly ToolDescription[];
  /** What `resources/list` and `resources/templates/list` answered, when the server declares resources. */
  readonly resources: McpResources | undefined;
  readonly toolNames: readonly string[];
  /** Whether the process has exited (after a call that killed it, or on its own). */
  readonly exited: boolean;
  /** Calls `tool`; one that does not answer within `timeoutMs` (default `CALL_TIMEOUT_MS`) throws `TargetStopped`. */
  call(tool: string, args: Record<string, unknown>, timeoutMs?: number): Promise<McpAnswer>;
  /** Reads a resource (`resources/read`), answered and failing as `call` is: every content's text, or its bytes decoded. */
  readResource(uri: string, timeoutMs?: number): Promise<McpAnswer>;
  close(): Promise<void>;
}

/**
 * The SDK forgets the pid when its client closes after a failed start; we still need it to clean up.
 * It keeps how the process ended too, which the SDK does not tell: a report of a server that died
 * mid-audit names its exit status or signal.
 */
class PidKeepingTransport extends StdioClientTransport {
  spawnedPid: number | undefined;
  /** How the process ended, once it has: `exit status 7`, `killed by SIGSEGV`. */
  ending: string | undefined;
  override async start(): Promise<void> {
    await super.start();
    this.spawnedPid = this.pid ?? undefined;
    // The SDK keeps its child private; 'exit' comes before the 'close' on which the SDK closes the
    // connection, so the ending is known by the time a call fails for it.
    const child = (this as unknown as { _process?: ChildProcess })._process;
    child?.once("exit", (code, signal) => {
      this.ending = signal !== null ? `killed by ${signal}` : `exit status ${code ?? "unknown"}`;
    });
  }
}

/** The server's command line for one root. */
export function commandFor(words: readonly string[], root: string): { command: string; args: string[] } {
  const [command, ...rest] = words.some((word) => word.includes(ROOT_PLACEHOLDER))
    ? words.map((word) => word.replaceAll(ROOT_PLACEHOLDER, root))
    : [...words, root];
  if (command === undefined || command === "") throw new McpServerError("no server command given");
  return { command, args: rest };
}

/**
 * Starts the server. `signal` (the user's Ctrl-C) ends a start under way at once, leaving no process;
 * `environment` sets variables for the server over the audit's own (mcp/target.ts: its HOME and TMPDIR).
 */
export async function connectServer(
  words: readonly string[],
  root: string,
  timeoutMs = START_TIMEOUT_MS,
  { signal, environment = {} }: { signal?: AbortSignal; environment?: Readonly<Record<string, string>> } = {},
): Promise<McpConnection> {
  const { command, args } = commandFor(words, root);
  const transport = new PidKeepingTransport({ command, args, stderr: "pipe", env: { ...process.env, ...environment } as Record<string, string> });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
  });
  const client = new Client({ name: "workspace-gates-audit", version: "1" });
  let closedByUs = false;
  let exited = false;
  client.onclose = () => {
    exited = true;
  };
  // Stray output on stdout (a console.log in a server) is the server's bug, not a reason to stop.
  client.onerror = () => {};
  const endedAs = () => (transport.ending === undefined ? "" : ` (${transport.ending})`);
  const where = () => `${[command, ...args].join(" ")}${stderr.trim() === "" ? "" : `\n  its stderr ends with: ${stderr.trim().split("\n").slice(-5).join("\n  ")}`}`;
  const close = async () => {
    if (closedByUs) return;
    closedByUs = true;
    const pid = transport.spawnedPid;
    const family = pid === undefined ? [] : await processTree(pid);
    await client.close().catch(() => {});
    await Promise.all(family.map(killIfStillRunning));
  };
  let tools: ToolDescription[];
  let resources: McpResources | undefined;
  // A signal of this start's own: the SDK never removes the listener it adds to a request's signal,
  // and the caller's lives for every start of the audit.
  const starting = new AbortController();
  const stopStarting = () => starting.abort(signal?.reason);
  signal?.addEventListener("abort", stopStarting, { once: true });
  try {
    signal?.throwIfAborted();
    const bounded = { timeout: timeoutMs, signal: starting.signal };
    await client.connect(transport, bounded);
    const capabilities = client.getServerCapabilities();
    tools = (await client.listTools(undefined, bounded)).tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
    if (capabilities?.resources !== undefined) {
      const listed = (await client.listResources(undefined, bounded)).resources.map(({ uri, name }) => ({ uri, name }));
      // Templates are optional in the protocol: a server without them answers method not found.
      const templates = await client.listResourceTemplates(undefined, bounded).then(
        (answer) => answer.resourceTemplates.map(({ uriTemplate, name }) => ({ uriTemplate, name })),
        () => [],
      );
      resources = { listed, templates };
    }
  } catch (error) {
    await close();
    throw new McpServerError(`${SERVER_DID_NOT_START}: ${error instanceof Error ? error.message : String(error)}\n  command: ${where()}`);
  } finally {
    signal?.removeEventListener("abort", stopStarting);
  }
  /** One request, its answer or its error: a server that exits or hangs throws `TargetStopped`, as the promise says. */
  const ask = async (what: string, timeoutMs: number, request: () => Promise<McpAnswer>): Promise<McpAnswer> => {
    if (exited) throw new TargetStopped(`the MCP server had exited${endedAs()} before a call to ${what}\n  command: ${where()}`, "exited");
    try {
      return await request();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) throw new TargetStopped(`${what} got no answer within ${timeoutMs} ms: ${message}\n  command: ${where()}`, "hung");
      if (exited || !(error instanceof McpError) || error.code === ErrorCode.ConnectionClosed)
        throw new TargetStopped(`the MCP server exited${endedAs()} during a call to ${what}: ${message}\n  command: ${where()}`, "exited");
      return { text: error.message, isError: true };
    }
  };
  return {
    pid: transport.spawnedPid,
    tools,
    resources,
    toolNames: tools.map((tool) => tool.name),
    get exited() {
      return exited;
    },
    close,
    call: (tool, toolArgs, timeoutMs = CALL_TIMEOUT_MS) =>
      ask(tool, timeoutMs, async () => {
        const result = await client.callTool({ name: tool, arguments: toolArgs }, undefined, { timeout: timeoutMs });
        return { text: answerText(result as { content?: unknown; structuredContent?: unknown }), isError: result.isError === true };
      }),
    readResource: (uri, timeoutMs = CALL_TIMEOUT_MS) =>
      ask(`resources/read of ${uri}`, timeoutMs, async () => {
        const { contents } = await client.readResource({ uri }, { timeout: timeoutMs });
        return { text: answerText({ content: contents.map((resource) => ({ type: "resource", resource })) }), isError: false };
      }),
  };
}

/**
 * Everything a result shows the model, as one text: each content block (a text; an image's, audio's or
 * embedded resource's bytes decoded from base64, since a secret read as media is still read; a
 * resource's text or link), then the structured content as JSON.
 */
export function answerText(result: { content?: unknown; structuredContent?: unknown }): string {
  const blocks = Array.isArray(result.content) ? (result.content as Record<string, unknown>[]) : [];
  const decoded = (base64: unknown) => (typeof base64 === "string" ? Buffer.from(base64, "base64").toString("utf8") : "");
  const parts = blocks.map((block) => {
    const resource = (typeof block.resource === "object" && block.resource !== null ? block.resource : {}) as Record<string, unknown>;
    switch (block.type) {
      case "text":
        return typeof block.text === "string" ? block.text : "";
      case "image":
      case "audio":
        return decoded(block.data);
      case "resource":
        return typeof resource.text === "string" ? resource.text : decoded(resource.blob);
      case "resource_link":
        return typeof block.uri === "string" ? block.uri : "";
      default:
        return "";
    }
  });
  const text = parts.join("\n");
  // Most servers repeat their text as structured content; only what it adds is added.
  const adds = stringLeaves(result.structuredContent).some((leaf) => !text.includes(leaf));
  return adds ? `${text}\n${JSON.stringify(result.structuredContent)}` : text;
}

function stringLeaves(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (typeof value === "number" || typeof value === "boolean") return [String(value)];
  if (typeof value !== "object" || value === null) return [];
  return Object.values(value).flatMap(stringLeaves);
}

/** A process, with its start time so a reused pid is never mistaken for it. */
export interface ProcessId {
  pid: number;
  start: string;
}

/** `pid` and every process below it (Linux: from /proc; elsewhere none, and the SDK ends the child alone). */
export async function processTree(pid: number): Promise<ProcessId[]> {
  let names: string[];
  try {
    names = await readdir("/proc");
  } catch {
    return [];
  }
  const stats = await Promise.all(names.filter((name) => /^\d+$/.test(name)).map(async (name) => ({ pid: Number(name), stat: await statOf(Number(name)) })));
  const family = new Map<number, ProcessId[]>();
  for (const { pid: child, stat } of stats) {
    if (stat === undefined) continue;
    const siblings = family.get(stat.ppid) ?? [];
    siblings.push({ pid: child, start: stat.start });
    family.set(stat.ppid, siblings);
  }
  const self = stats.find((entry) => entry.pid === pid)?.stat;
  const found: ProcessId[] = self === undefined ? [] : [{ pid, start: self.start }];
  const walk = (parent: number) => {
    for (const child of family.get(parent) ?? []) {
      found.push(child);
      walk(child.pid);
    }
  };
  walk(pid);
  return found;
}

async function statOf(pid: number): Promise<{ state: string; ppid: number; start: string } | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    // The command name, in parentheses, may hold spaces and parentheses: fields follow the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // After the name: state, ppid, ...; the start time is field 22 of the whole line, 20th here.
    return { state: fields[0] ?? "", ppid: Number(fields[1]), start: fields[19] ?? "" };
  } catch {
    return undefined; // The process ended while we looked.
  }
}

/** Whether the process is still the one we saw, and not a zombie waiting for its parent. */
export async function stillRunning({ pid, start }: ProcessId): Promise<boolean> {
  const stat = await statOf(pid);
  return stat !== undefined && stat.start === start && stat.state !== "Z";
}

/** How long `close` waits for a killed process to be gone: a loaded machine may not run it at once. */
const DEATH_WAIT_MS = 5_000;

async function killIfStillRunning(process_: ProcessId): Promise<void> {
  if (!(await stillRunning(process_))) return;
  try {
    process.kill(process_.pid, "SIGKILL");
  } catch {
    return; // Gone in between: what we wanted.
  }
  // SIGKILL is delivered when the process next runs; close promises it is gone, not only signalled.
  for (let waited = 0; waited < DEATH_WAIT_MS && (await stillRunning(process_)); waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
}
