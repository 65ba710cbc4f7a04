// The agent loop (runAgent) and the approval hook: tool calls, denials, turn limits, and a hook or
// tool that misbehaves stopping the run instead of approving.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { type Message, runAgent, scriptedProvider } from "../src/agent/agent.js";
import { approveAll, denyBashByDefault } from "../src/agent/approval.js";
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
