/**
 * Runs the bad-input table (fixtures/bad-input.ts) against each tool, directly and through the agent
 * loop. Every row, whatever it expects, must also: answer (within a deadline, so a blocking open
 * fails the row instead of hanging the run), never reject, leave the workspace exactly as the row says
 * (no partial file, no stray directory) and leave the canaries beside the workspace untouched.
 */
import { execFileSync } from "node:child_process";
import { constants } from "node:fs";
import { lstat, mkdir, open, readFile, readdir, readlink, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Expected,
  type HookBehaviour,
  LOOP_ROWS,
  type LoopRow,
  type SetupStep,
  TABLE_BASH_LIMITS,
  TOOL_ROWS,
  type ToolRow,
} from "../fixtures/bad-input.js";
import { runAgent, scriptedProvider } from "../src/agent/agent.js";
import { type BeforeToolCall, approveAll, denyBashByDefault } from "../src/agent/approval.js";
import { type Sandbox, createSandbox } from "../src/kit/sandbox/sandbox.js";
import type { Tool, ToolResult } from "../src/gates/tool.js";
import { type FsApi, workspacePath } from "../src/gates/workspace-path.js";
import { createWorkspaceTools } from "../src/tools/workspace-tools.js";
import type { ToolSet } from "../src/kit/sandbox/tool-sets.js";
import { describeEachToolSet } from "./support/tool-sets.js";
import { POSIX_FIFO, POSIX_SHELL, type PlatformNeed } from "./support/platform.js";

/** Far above any honest answer here (the slowest rows wait for a 200 ms bash timeout); only a hang reaches it. */
const HANG_DEADLINE_MS = 5_000;

describeEachToolSet("bad-input table: each tool, called directly and through the agent loop", (toolSet) => {
  for (const tool of ["read", "write", "bash"] as const) {
    const rows = TOOL_ROWS.filter((row) => row.tool === tool);
    it(`has at least 30 rows for ${tool}`, () => {
      expect(rows.length).toBeGreaterThanOrEqual(30);
    });
    for (const via of ["execute", "agent loop"] as const) {
      describe(`${tool} via ${via}`, () => {
        const sandbox = sharedSandbox();
        // Through the loop, a signal aborted before the start stops the run before any call: the loop's
        // own rule, tested in test/agent.test.ts "runAgent after an abort".
        for (const row of via === "agent loop" ? rows.filter((candidate) => candidate.bash?.abort !== "before-start") : rows) {
          it(row.label, async (context) => {
            const need = platformNeed(row);
            if (need.missing) context.skip(need.reason);
            await inEmptyWorkspace(sandbox(), row.setup ?? [], context.skip, async (box) => {
              const shell = row.bash?.shell;
              const answer = await withShell(typeof shell === "string" ? placeholders(shell, box) : shell, () => callTool(toolSet, box, row, via));
              checkAnswer(row.tool, row.expect, answer, box);
              expect(await workspaceTree(box.root)).toEqual(expectedTree(box, row));
            });
          });
        }
      });
    }
  }
});

describe("bad-input table: the agent loop's own failures", () => {
  const sandbox = sharedSandbox();
  for (const row of LOOP_ROWS) {
    it(row.label, async (context) => {
      await inEmptyWorkspace(sandbox(), row.setup ?? [], context.skip, async (box) => {
        const tools = [...createWorkspaceTools(box.root, { bash: TABLE_BASH_LIMITS }), ...extraTools(row)];
        // a fresh copy of the input, since a hook may change it in place
        const call = { id: "call-1", name: row.call.name, input: withPlaceholders(row.call.input, box) };
        const provider = scriptedProvider([{ toolCalls: [call] }, { text: "done" }]);
        const recorded: unknown[] = [];
        const running = runAgent("go", {
          provider,
          tools,
          beforeToolCall: hook(row.hook, box),
          onMessage: (message) => recorded.push(message),
        });
        const expectedMessage = { role: "tool", toolCallId: "call-1", name: row.call.name, ...row.recorded };
        if (row.rethrows === undefined) {
          await expect(withinDeadline(running, "the loop")).resolves.toMatchObject({ stopReason: "done" });
          // the model gets the failure back as the last message of its next request
          expect(provider.requests[1]?.at(-1)).toEqual(expectedMessage);
        } else {
          const thrown = await withinDeadline(running, "the loop").then(
            () => expect.unreachable("the loop should have rethrown"),
            (error: unknown) => error,
          );
          if ("message" in row.rethrows) expect(thrown).toMatchObject({ message: row.rethrows.message });
          else expect(thrown).toBe(row.rethrows.value);
          expect(recorded.at(-1)).toEqual(expectedMessage);
          expect(provider.requests).toHaveLength(1);
        }
        expect(await workspaceTree(box.root)).toEqual(expectedTree(box, row));
      });
    });
  }
});

describe("workspacePath refuses a NUL byte itself", () => {
  // An injected fsApi (memfs, a fork's own wrapper) need not reject NUL the way node:fs does, and a
  // layer that truncates at NUL would check `a.txt` and then open `a.txt\0.png` (CVE-2023-32004).
  const acceptsAnyPath = {
    lstat: async () => ({}),
    realpath: async (path: string) => path,
  } as unknown as FsApi;

  it("without relying on the filesystem to reject it", async () => {
    await expect(workspacePath("/ws", "a.txt\0.png", false, acceptsAnyPath)).rejects.toThrow("path must not contain NUL bytes");
    await expect(workspacePath("/ws", "new\0/x", true, acceptsAnyPath)).rejects.toThrow("path must not contain NUL bytes");
  });

  it("and still accepts the same path without the NUL byte", async () => {
    await expect(workspacePath("/ws", "a.txt.png", false, acceptsAnyPath)).resolves.toBe("/ws/a.txt.png");
  });
});

// ---------------------------------------------------------------------------------------------------

type Via = "execute" | "agent loop";

/** What the row needs from the platform: every bash row a POSIX shell, some rows Linux itself. */
function platformNeed(row: ToolRow): PlatformNeed {
  if (row.linuxOnly !== undefined) return { missing: process.platform !== "linux", reason: `Linux only: ${row.linuxOnly}` };
  return row.tool === "bash" ? POSIX_SHELL : { missing: false, reason: "" };
}

async function callTool(toolSet: ToolSet, box: Sandbox, row: ToolRow, via: Via): Promise<ToolResult> {
  const tools = toolSet.create(box.root, { bash: { ...TABLE_BASH_LIMITS, ...row.bash?.limits } });
  const tool = tools.find((candidate) => candidate.spec.name === row.tool) as Tool;
  const input = withPlaceholders(row.input, box);
  const controller = new AbortController();
  const abort = row.bash?.abort;
  if (abort === "before-start") controller.abort();
  const answering = via === "execute" ? tool.execute(input, controller.signal) : answerThroughLoop(tools, row.tool, input, controller.signal);
  if (typeof abort === "object") {
    await waitForFile(join(box.root, abort.onceFileExists));
    controller.abort();
  }
  return withinDeadline(answering, `${row.tool} via ${via}`);
}

/** One call through `runAgent`, answered as the tool message the loop recorded for it. */
async function answerThroughLoop(tools: Tool[], name: string, input: unknown, signal: AbortSignal): Promise<ToolResult> {
  const provider = scriptedProvider([{ toolCalls: [{ id: "call-1", name, input }] }, { text: "done" }]);
  const run = await runAgent("bad input", { provider, tools, beforeToolCall: approveAll, signal });
  expect(run.stopReason).toBe(signal.aborted ? "aborted" : "done");
  const message = run.messages[2];
  if (message?.role !== "tool") throw new Error(`expected a tool message, got ${JSON.stringify(message)}`);
  expect(message).toMatchObject({ toolCallId: "call-1", name });
  return message.isError ? { content: message.content, isError: true } : { content: message.content };
}

function checkAnswer(tool: string, expected: Expected, answer: ToolResult, box: Sandbox): void {
  expect(typeof answer.content).toBe("string");
  if ("ok" in expected) {
    expect(answer).toEqual({ content: placeholders(expected.ok, box) });
    return;
  }
  expect(answer.isError).toBe(true);
  // every failure names its tool, or is the chapter's invalid-input message for that tool
  expect(answer.content.startsWith(`${tool}: `) || answer.content.startsWith(`invalid ${tool} input: `)).toBe(true);
  if ("error" in expected) expect(answer.content).toBe(placeholders(expected.error, box));
  else if ("errorStartingWith" in expected) expect(answer.content.startsWith(placeholders(expected.errorStartingWith, box))).toBe(true);
  else {
    // `<tool>: <errno>: <description>, <syscall> '<path>'`, taken apart rather than matched with one
    // regular expression, which a 100 000-character path would make too large to compile
    const head = `${tool}: ${expected.errno}: `;
    const tail = ` '${placeholders(expected.path, box)}'`;
    expect(answer.content.startsWith(head)).toBe(true);
    expect(answer.content.endsWith(tail)).toBe(true);
    expect(answer.content.slice(head.length, answer.content.length - tail.length)).toMatch(/^[^,']+, [a-z]+$/);
  }
}

function hook(behaviour: HookBehaviour, box: Sandbox): BeforeToolCall {
  if ("approveAll" in behaviour) return approveAll;
  if ("denyBashByDefault" in behaviour) return denyBashByDefault;
  if ("deny" in behaviour) return () => ({ approved: false, reason: behaviour.deny });
  if ("substitute" in behaviour) return () => ({ approved: true, input: withPlaceholders(behaviour.substitute, box) });
  if ("mutates" in behaviour)
    return (call) => {
      Object.assign(call.input as object, withPlaceholders(behaviour.mutates, box));
      return { approved: true };
    };
  if ("throws" in behaviour)
    return () => {
      throw behaviour.throws;
    };
  if ("rejects" in behaviour) return async () => Promise.reject(behaviour.rejects);
  return () => behaviour.answers as never;
}

function extraTools(row: LoopRow): Tool[] {
  const extra = row.extraTool;
  if (extra === undefined) return [];
  const { behaviour } = extra;
  return [
    {
      spec: { name: extra.name, description: "misbehaves on purpose", inputSchema: { type: "object", properties: {}, required: [], additionalProperties: false } },
      execute: async () => {
        if ("throws" in behaviour) throw behaviour.throws;
        return behaviour.answers as never;
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------------------
// sandbox, setup and the workspace tree

/**
 * One sandbox for a block of rows (a fresh one per row would cost more than most rows do); each row
 * starts from an empty workspace, and the canaries, which never change when every row passes, are
 * checked after each row.
 */
function sharedSandbox(): () => Sandbox {
  let box: Sandbox | undefined;
  beforeAll(async () => {
    box = await createSandbox("workspace-gates-bad-input-");
  });
  afterAll(async () => {
    await box?.dispose();
  });
  return () => {
    if (box === undefined) throw new Error("the sandbox is created in beforeAll");
    return box;
  };
}

/**
 * Empties the workspace, builds the row's setup in it and runs the row. Afterwards, whatever happened,
 * FIFOs are opened once for reading and writing so that a call stuck in open() on one of them wakes up
 * (its thread would otherwise stay blocked), and the canaries are checked.
 */
async function inEmptyWorkspace(
  box: Sandbox,
  setup: readonly SetupStep[],
  skip: (note?: string) => never,
  body: (box: Sandbox) => Promise<void>,
): Promise<void> {
  for (const name of await readdir(box.root)) await rm(join(box.root, name), { recursive: true, force: true });
  try {
    for (const step of setup) await build(box, step, skip);
    await body(box);
  } finally {
    for (const step of setup) if ("fifo" in step) await unblockFifo(join(box.root, step.fifo));
  }
  expect(await box.canaryChanges()).toEqual([]);
}

async function build(box: Sandbox, step: SetupStep, skip: (note?: string) => never): Promise<void> {
  if ("dir" in step) await mkdir(join(box.root, step.dir), { recursive: true });
  else if ("symlink" in step) await symlink(placeholders(step.to, box), join(box.root, step.symlink));
  else if ("fifo" in step) {
    if (POSIX_FIFO.missing) skip(POSIX_FIFO.reason);
    execFileSync("mkfifo", [join(box.root, step.fifo)]);
  }
  else if ("device" in step) {
    try {
      execFileSync("mknod", [join(box.root, step.device), "c", "1", "3"], { stdio: "pipe" });
    } catch {
      skip("mknod needs CAP_MKNOD (run as root, as CI does)");
    }
  } else if ("bytes" in step) await writeFile(join(box.root, step.file), Buffer.from(step.bytes));
  else await writeFile(join(box.root, step.file), step.text);
}

async function unblockFifo(path: string): Promise<void> {
  try {
    // O_RDWR on a FIFO never blocks on Linux and counts as both a reader and a writer.
    const handle = await open(path, constants.O_RDWR | constants.O_NONBLOCK);
    await handle.close();
  } catch {
    // already gone, or replaced by the call under test: nothing is waiting on it then
  }
}

/** Every entry under the workspace, without following links: relative path → kind and content. */
async function workspaceTree(root: string): Promise<Record<string, string>> {
  const tree: Record<string, string> = {};
  const walk = async (relative: string): Promise<void> => {
    for (const name of (await readdir(join(root, relative))).sort()) {
      const path = relative === "" ? name : `${relative}/${name}`;
      const stats = await lstat(join(root, path));
      if (stats.isDirectory()) {
        tree[path] = "dir";
        await walk(path);
      } else if (stats.isSymbolicLink()) tree[path] = `link -> ${await readlink(join(root, path))}`;
      else if (stats.isFile()) tree[path] = fileEntry(await readFile(join(root, path)));
      else tree[path] = stats.isFIFO() ? "fifo" : stats.isCharacterDevice() ? "character device" : "special";
    }
  };
  await walk("");
  return tree;
}

/** The tree the setup alone builds, plus what the row says the call creates. */
function expectedTree(box: Sandbox, row: { setup?: readonly SetupStep[]; creates?: Record<string, string>; createsDirs?: readonly string[] }): Record<string, string> {
  const tree: Record<string, string> = {};
  for (const step of row.setup ?? []) {
    if ("dir" in step) tree[step.dir] = "dir";
    else if ("symlink" in step) tree[step.symlink] = `link -> ${placeholders(step.to, box)}`;
    else if ("fifo" in step) tree[step.fifo] = "fifo";
    else if ("device" in step) tree[step.device] = "character device";
    else tree[step.file] = fileEntry("bytes" in step ? Buffer.from(step.bytes) : Buffer.from(step.text));
  }
  for (const dir of row.createsDirs ?? []) tree[dir] = "dir";
  for (const [path, text] of Object.entries(row.creates ?? {})) tree[path] = fileEntry(Buffer.from(text));
  return tree;
}

function fileEntry(bytes: Buffer): string {
  return `file ${bytes.toString("latin1")}`;
}

// ---------------------------------------------------------------------------------------------------
// small helpers

/**
 * Replaces `<root>` and `<outside>` in the string fields of a plain object. Anything else (a getter,
 * a prototype, a String object, a primitive) is passed through untouched, since copying it would
 * change the very shape the row is about.
 */
function withPlaceholders(input: unknown, box: Sandbox): unknown {
  if (typeof input !== "object" || input === null || Object.getPrototypeOf(input) !== Object.prototype) return input;
  const descriptors = Object.values(Object.getOwnPropertyDescriptors(input));
  if (descriptors.some((descriptor) => !("value" in descriptor))) return input;
  return Object.fromEntries(
    Object.entries(input).map(([key, value]) => [key, typeof value === "string" ? placeholders(value, box) : value]),
  );
}

function placeholders(text: string, box: Sandbox): string {
  return text.replaceAll("<root>", box.root).replaceAll("<outside>", box.outside);
}

/** Runs `body` with SHELL set as the row says (`/bin/sh` unless given; `null` unsets it), then restores it. */
async function withShell<T>(shell: string | null | undefined, body: () => Promise<T>): Promise<T> {
  const saved = process.env.SHELL;
  const wanted = shell === undefined ? "/bin/sh" : shell;
  if (wanted === null) delete process.env.SHELL;
  else process.env.SHELL = wanted;
  try {
    return await body();
  } finally {
    if (saved === undefined) delete process.env.SHELL;
    else process.env.SHELL = saved;
  }
}

async function withinDeadline<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${HANG_DEADLINE_MS} ms: it blocks`)), HANG_DEADLINE_MS);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function waitForFile(path: string): Promise<void> {
  for (let waited = 0; waited < HANG_DEADLINE_MS; waited += 10) {
    if (await lstat(path).then(() => true, () => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${path} never appeared`);
}
