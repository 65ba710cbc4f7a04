// The agent loop (runAgent) and the approval hook: tool calls, denials, turn limits, and a hook or
// tool that misbehaves stopping the run instead of approving.
import { getEventListeners } from "node:events";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { type Message, runAgent, scriptedProvider } from "../src/agent/agent.js";
import { type BeforeToolCall, approveAll, denyBashByDefault } from "../src/agent/approval.js";
import { type Sandbox } from "../src/kit/sandbox/sandbox.js";
import { useSandbox } from "./support/sandbox.js";
import type { Tool } from "../src/gates/tool.js";
import { createWorkspaceTools } from "../src/tools/workspace-tools.js";

let box: Sandbox;
const sandbox = useSandbox();
beforeEach(async () => {
  box = sandbox.current;
});

describe("denyBashByDefault", () => {
  it("refuses bash with the chapter's message and lets read and write through", async () => {
    expect(denyBashByDefault({ id: "1", name: "bash", input: { command: "ls" } })).toEqual({
      approved: false,
      reason: "bash requires an explicit approval policy",
    });
    expect(denyBashByDefault({ id: "2", name: "read", input: {} })).toEqual({ approved: true });
    expect(denyBashByDefault({ id: "3", name: "write", input: {} })).toEqual({ approved: true });
  });

  it("is the loop's default: bash is refused, write runs", async () => {
    const provider = scriptedProvider([
      {
        toolCalls: [
          { id: "w", name: "write", input: { path: "a.txt", content: "hi" } },
          { id: "b", name: "bash", input: { command: "touch made-by-bash" } },
        ],
      },
      { text: "done" },
    ]);
    const run = await runAgent("go", { provider, tools: createWorkspaceTools(box.root) });
    expect(run.messages.filter((m) => m.role === "tool")).toEqual([
      { role: "tool", toolCallId: "w", name: "write", content: "wrote 2 bytes to a.txt", isError: false },
      { role: "tool", toolCallId: "b", name: "bash", content: "bash requires an explicit approval policy", isError: true },
    ]);
    await expect(readFile(join(box.root, "made-by-bash"))).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("runAgent", () => {
  it("records an isError result and continues, so the model can correct itself", async () => {
    const provider = scriptedProvider([
      { toolCalls: [{ id: "1", name: "read", input: { path: "../outside/secret.txt" } }] },
      { toolCalls: [{ id: "2", name: "nope", input: {} }] },
      { text: "gave up" },
    ]);
    const run = await runAgent("read the secret", { provider, tools: createWorkspaceTools(box.root), beforeToolCall: approveAll });
    expect(run.stopReason).toBe("done");
    expect(run.messages.at(-1)).toEqual({ role: "assistant", text: "gave up", toolCalls: [] });
    // the second request already carries the first tool error back to the model
    expect(provider.requests[1]?.at(-1)).toEqual({
      role: "tool",
      toolCallId: "1",
      name: "read",
      content: "read: path escapes workspace",
      isError: true,
    });
    expect(provider.requests[2]?.at(-1)).toMatchObject({ toolCallId: "2", content: "unknown tool: nope", isError: true });
  });

  it("records a thrown exception as a failure and rethrows it", async () => {
    const broken: Tool = {
      spec: { name: "broken", description: "throws", inputSchema: { type: "object", properties: {}, required: [], additionalProperties: false } },
      execute: async () => {
        throw new Error("disk on fire");
      },
    };
    const provider = scriptedProvider([{ toolCalls: [{ id: "x", name: "broken", input: {} }] }]);
    const recorded: Message[] = [];
    await expect(
      runAgent("go", { provider, tools: [broken], beforeToolCall: approveAll, onMessage: (m) => recorded.push(m) }),
    ).rejects.toThrow("disk on fire");
    expect(recorded.at(-1)).toEqual({ role: "tool", toolCallId: "x", name: "broken", content: "broken: disk on fire", isError: true });
  });

  it("stops after maxTurns when the model never stops calling tools", async () => {
    const call = { toolCalls: [{ id: "r", name: "read", input: { path: "missing" } }] };
    const provider = scriptedProvider([call, call, call, call]);
    const run = await runAgent("loop", { provider, tools: createWorkspaceTools(box.root), maxTurns: 3 });
    expect(run.stopReason).toBe("max_turns");
    expect(provider.requests).toHaveLength(3);
  });

  it("sends the provider the whole transcript, the tools' specs, and the signal only when there is one", async () => {
    const tools = createWorkspaceTools(box.root);
    const seen: Record<string, unknown>[] = [];
    const script = scriptedProvider([{ toolCalls: [{ id: "r", name: "read", input: { path: "missing" } }] }, { text: "end" }]);
    const provider = { next: async (request: Parameters<typeof script.next>[0]) => (seen.push({ ...request }), script.next(request)) };
    const run = await runAgent("go", { provider, tools });
    expect(seen.map((request) => Object.keys(request).sort())).toEqual([["messages", "tools"], ["messages", "tools"]]);
    expect(seen[0]?.tools).toEqual(tools.map((tool) => tool.spec));
    expect(run.messages).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", text: "", toolCalls: [{ id: "r", name: "read", input: { path: "missing" } }] },
      { role: "tool", toolCallId: "r", name: "read", content: expect.stringMatching(/^read: ENOENT/), isError: true },
      { role: "assistant", text: "end", toolCalls: [] },
    ]);
    const signal = new AbortController().signal;
    seen.length = 0;
    await runAgent("go", { provider: { next: async (request) => (seen.push({ ...request }), { text: "" }) }, tools, signal });
    expect(seen[0]?.signal).toBe(signal);
  });

  it("has a scripted provider that fails loudly when its script runs out", async () => {
    await expect(runAgent("go", { provider: scriptedProvider([]), tools: [] })).rejects.toThrow("scripted provider has no turn 1");
  });

  it("runs the input an approval hook substitutes, through the tool's own gates", async () => {
    const provider = scriptedProvider([{ toolCalls: [{ id: "1", name: "write", input: { path: "ok.txt", content: "x" } }] }, { text: "" }]);
    const run = await runAgent("go", {
      provider,
      tools: createWorkspaceTools(box.root),
      beforeToolCall: () => ({ approved: true, input: { path: "../outside/planted.txt", content: "x" } }),
    });
    expect(run.messages[2]).toMatchObject({ content: "write: path escapes workspace", isError: true });
  });
});

describe("runAgent after an abort", () => {
  // Security review, finding 6: a turn [bash sleep, write, bash] aborted at 50 ms. The first bash was
  // killed, the write still wrote after-abort.txt, the last bash refused by itself.
  it("runs no further call of the turn (the review's case)", async () => {
    const provider = scriptedProvider([
      {
        toolCalls: [
          { id: "sleep", name: "bash", input: { command: "sleep 5" } },
          { id: "w", name: "write", input: { path: "after-abort.txt", content: "x" } },
          { id: "b", name: "bash", input: { command: "touch after-abort-bash" } },
        ],
      },
      { text: "never asked" },
    ]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const run = await runAgent("go", { provider, tools: createWorkspaceTools(box.root), beforeToolCall: approveAll, signal: controller.signal });
    await expect(readFile(join(box.root, "after-abort.txt"))).rejects.toMatchObject({ code: "ENOENT" });
    await expect(readFile(join(box.root, "after-abort-bash"))).rejects.toMatchObject({ code: "ENOENT" });
    expect(run.messages.slice(2)).toEqual([
      expect.objectContaining({ toolCallId: "sleep", content: expect.stringMatching(/^bash: aborted: /), isError: true }),
      { role: "tool", toolCallId: "w", name: "write", content: "write: aborted: the caller's AbortSignal fired before the call started; it did not run", isError: true },
      { role: "tool", toolCallId: "b", name: "bash", content: "bash: aborted: the caller's AbortSignal fired before the call started; it did not run", isError: true },
    ]);
    expect(run.stopReason).toBe("aborted");
    expect(provider.requests).toHaveLength(1);
  });

  const NOT_STARTED = "write: aborted: the caller's AbortSignal fired before the call started; it did not run";
  const writeCall = { toolCalls: [{ id: "w", name: "write", input: { path: "late.txt", content: "x" } }] };

  async function runWith(beforeToolCall: BeforeToolCall, controller: AbortController) {
    const provider = scriptedProvider([writeCall, { text: "never asked" }]);
    const run = await runAgent("go", { provider, tools: createWorkspaceTools(box.root), beforeToolCall, signal: controller.signal });
    await expect(readFile(join(box.root, "late.txt"))).rejects.toMatchObject({ code: "ENOENT" });
    expect(run.stopReason).toBe("aborted");
    expect(provider.requests).toHaveLength(1);
    return run;
  }

  it("asks nothing of the provider when the signal aborted before the run", async () => {
    const provider = scriptedProvider([writeCall]);
    const run = await runAgent("go", { provider, tools: createWorkspaceTools(box.root), signal: AbortSignal.abort() });
    expect(run).toEqual({ messages: [{ role: "user", content: "go" }], stopReason: "aborted" });
    expect(provider.requests).toHaveLength(0);
  });

  it("asks no hook once aborted, between the provider's answer and the call", async () => {
    const controller = new AbortController();
    let asked = 0;
    const provider = scriptedProvider([writeCall]);
    const aborting = { next: async (request: Parameters<typeof provider.next>[0]) => provider.next(request).finally(() => controller.abort()) };
    const run = await runAgent("go", { provider: aborting, tools: createWorkspaceTools(box.root), beforeToolCall: () => (asked++, { approved: true }), signal: controller.signal });
    expect(asked).toBe(0);
    expect(run.messages.at(-1)).toMatchObject({ toolCallId: "w", content: NOT_STARTED, isError: true });
  });

  it("does not count an approval the hook gave after it aborted", async () => {
    const controller = new AbortController();
    const run = await runWith(() => (controller.abort(), { approved: true }), controller);
    expect(run.messages.at(-1)).toEqual({ role: "tool", toolCallId: "w", name: "write", content: NOT_STARTED, isError: true });
  });

  it.each([
    ["aborts later", (controller: AbortController) => setTimeout(() => controller.abort(), 20)],
    ["aborts at once", (controller: AbortController) => controller.abort()],
  ])("stops waiting for a hook that never settles and %s", async (_label, abort) => {
    const controller = new AbortController();
    const run = await runWith(() => (abort(controller), new Promise<never>(() => undefined)), controller);
    expect(run.messages.at(-1)).toMatchObject({ content: NOT_STARTED, isError: true });
  });

  it("still records a hook that rejects, when a signal is given, and lets go of the signal after every call", async () => {
    const controller = new AbortController();
    const provider = scriptedProvider([
      { toolCalls: [{ id: "r", name: "read", input: { path: "missing" } }] },
      { toolCalls: [{ id: "w", name: "write", input: { path: "a.txt", content: "x" } }] },
    ]);
    let rejectNext = false;
    const hook: BeforeToolCall = async () => {
      if (rejectNext) throw new Error("policy store down");
      rejectNext = true;
      return { approved: true };
    };
    const recorded: Message[] = [];
    await expect(
      runAgent("go", { provider, tools: createWorkspaceTools(box.root), beforeToolCall: hook, signal: controller.signal, onMessage: (m) => recorded.push(m) }),
    ).rejects.toThrow("policy store down");
    expect(recorded.at(-1)).toEqual({ role: "tool", toolCallId: "w", name: "write", content: "write: approval hook failed, the call did not run: policy store down", isError: true });
    expect(getEventListeners(controller.signal, "abort")).toEqual([]);
  });

  it("ends as aborted, not max_turns, when the abort comes in the last turn", async () => {
    const controller = new AbortController();
    const provider = scriptedProvider([writeCall]);
    const run = await runAgent("go", { provider, tools: createWorkspaceTools(box.root), beforeToolCall: () => (controller.abort(), { approved: true }), maxTurns: 1, signal: controller.signal });
    expect(run.stopReason).toBe("aborted");
  });
});
