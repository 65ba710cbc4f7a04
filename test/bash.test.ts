// The bash tool and its limits: exit codes, timeout (also when the shell traps SIGTERM), maxBuffer,
// abort, output truncation, and the shell it runs.
import { access, lstat, mkdir, rm } from "node:fs/promises";
import { getEventListeners } from "node:events";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { type Sandbox } from "../src/kit/sandbox/sandbox.js";
import { POSIX_SHELL, describeNeeding } from "./support/platform.js";
import { useSandbox } from "./support/sandbox.js";
import type { Tool } from "../src/gates/tool.js";
import { bashLimits } from "../src/tools/bash.js";
import type { FsApi } from "../src/gates/workspace-path.js";
import { createWorkspaceTools } from "../src/tools/workspace-tools.js";

let box: Sandbox;
let bash: Tool;
// The timeout is short enough for the kill tests, long enough for a shell to start on a loaded machine.
const fast = { timeoutMs: 2_000, maxBuffer: 1024, maxOutputChars: 100 };
const sandbox = useSandbox();
beforeEach(async () => {
  box = sandbox.current;
  bash = createWorkspaceTools(box.root, { bash: fast })[2] as Tool;
});

// Commands that must be killed end in `exec sleep`, so the shell's pid is the sleeper's and the kill
// leaves no orphan behind (see test/bash-cancellation.test.ts for what a kill does not reach).
describeNeeding(POSIX_SHELL, "bash", () => {
  it("runs in the real workspace root, even when the root is given through a symlink", async () => {
    const { symlink } = await import("node:fs/promises");
    await symlink(box.root, join(box.root, "alias"));
    const viaAlias = createWorkspaceTools(join(box.root, "alias"))[2] as Tool;
    await expect(viaAlias.execute({ command: "pwd -P; pwd" })).resolves.toEqual({ content: `${box.root}\n${box.root}\n` });
  });

  it("runs nothing once the workspace root is gone, and says the root is missing, by its workspace name", async () => {
    await expect(bash.execute({ command: "pwd" })).resolves.toEqual({ content: `${box.root}\n` });
    // What `rm -rf "$PWD"` run through bash itself would leave behind.
    await rm(box.root, { recursive: true });
    try {
      await expect(bash.execute({ command: "echo ran > ../ran.txt" })).resolves.toEqual({
        content: "bash: ENOENT: no such file or directory, realpath '.'",
        isError: true,
      });
      await expect(access(join(box.root, "..", "ran.txt"))).rejects.toMatchObject({ code: "ENOENT" });
    } finally {
      await mkdir(box.root);
    }
  });

  it("reports a path check that fails with EACCES as itself, not as a shell that cannot run", async () => {
    const deniedRoot = Object.assign(new Error(`EACCES: permission denied, realpath '${box.root}'`), { code: "EACCES" });
    const fsApi = { lstat, realpath: async () => Promise.reject(deniedRoot) } as unknown as FsApi;
    const checked = createWorkspaceTools(box.root, { fsApi })[2] as Tool;
    await expect(checked.execute({ command: "pwd" })).resolves.toEqual({ content: `bash: EACCES: permission denied, realpath '${box.root}'`, isError: true });
  });

  it("gives the command no input: a command that reads stdin sees end-of-file at once, not the timeout", async () => {
    await expect(bash.execute({ command: "cat; echo read-to-end" })).resolves.toEqual({ content: "read-to-end\n" });
  });

  it("leaves no listener on the caller's signal once the command ended, however it ended, or when the shell cannot start", async () => {
    const controller = new AbortController();
    await bash.execute({ command: "echo done" }, controller.signal);
    await bash.execute({ command: "exit 3" }, controller.signal);
    const shell = process.env.SHELL;
    process.env.SHELL = join(box.scratch, "no-such-shell");
    try {
      await expect(bash.execute({ command: "echo never" }, controller.signal)).resolves.toMatchObject({ content: expect.stringMatching(/^bash: shell not found: /) });
    } finally {
      if (shell === undefined) delete process.env.SHELL;
      else process.env.SHELL = shell;
    }
    expect(getEventListeners(controller.signal, "abort")).toEqual([]);
  });

  it("returns stdout then stderr", async () => {
    await expect(bash.execute({ command: "echo out; echo err >&2" })).resolves.toEqual({ content: "out\nerr\n" });
  });

  it("cuts output over maxOutputChars with a marker", async () => {
    const { content } = await bash.execute({ command: "printf 'x%.0s' $(seq 1 150)" });
    expect(content).toBe(`${"x".repeat(100)}\n[truncated 50 characters]`);
  });

  it("answers a non-zero exit with the code and the output", async () => {
    await expect(bash.execute({ command: "echo partial; echo broken >&2; exit 3" })).resolves.toEqual({
      content: "bash: exit code 3\npartial\nbroken\n",
      isError: true,
    });
  });

  it("kills a command at the timeout and says so", async () => {
    await expect(bash.execute({ command: "echo started; exec sleep 5" })).resolves.toEqual({
      content: "bash: timeout: the command was killed after 2000 ms\nstarted\n",
      isError: true,
    });
  });

  it("kills a shell that ignores SIGTERM at the timeout", async () => {
    const result = await bash.execute({ command: "trap '' TERM; exec sleep 5" });
    expect(result).toMatchObject({ isError: true, content: expect.stringMatching(/^bash: timeout/) });
  });

  it("kills a command whose output passes maxBuffer", async () => {
    const result = await bash.execute({ command: "yes | head -c 5000; exec sleep 5" });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^bash: maxBuffer exceeded: stdout passed 1024 bytes; the command was killed\n/);
  });

  it("keeps exactly maxBuffer bytes of the stream that passed it", async () => {
    const wide = createWorkspaceTools(box.root, { bash: { timeoutMs: 5_000, maxBuffer: 1024, maxOutputChars: 10_000 } })[2] as Tool;
    const result = await wide.execute({ command: "head -c 5000 /dev/zero | tr '\\0' a; exec sleep 5" });
    expect(result).toEqual({ content: `bash: maxBuffer exceeded: stdout passed 1024 bytes; the command was killed\n${"a".repeat(1024)}`, isError: true });
  });

  it("keeps exactly maxBuffer bytes when the chunk that passes it comes after earlier output", async () => {
    const wide = createWorkspaceTools(box.root, { bash: { timeoutMs: 5_000, maxBuffer: 1024, maxOutputChars: 10_000 } })[2] as Tool;
    // The pause makes the first byte a chunk of its own, so the second chunk straddles the limit.
    const result = await wide.execute({ command: "printf a; sleep 0.3; head -c 5000 /dev/zero | tr '\\0' a; exec sleep 5" });
    expect(result).toEqual({ content: `bash: maxBuffer exceeded: stdout passed 1024 bytes; the command was killed\n${"a".repeat(1024)}`, isError: true });
  });

  it("lets output of exactly maxBuffer bytes through: the limit is passed only beyond it", async () => {
    const wide = createWorkspaceTools(box.root, { bash: { timeoutMs: 5_000, maxBuffer: 1024, maxOutputChars: 10_000 } })[2] as Tool;
    await expect(wide.execute({ command: "head -c 1024 /dev/zero | tr '\\0' a" })).resolves.toEqual({ content: "a".repeat(1024) });
  });

  it("answers the abort when the shell exited 0 and a background process held its output", async () => {
    const controller = new AbortController();
    // The background job marks `started` only once the shell ($$) is gone.
    const pending = bash.execute({ command: "(while kill -0 $$ 2>/dev/null; do sleep 0.01; done; : > started; exec sleep 5) & echo waiting" }, controller.signal);
    await until(() => access(join(box.root, "started")).then(() => true, () => false));
    controller.abort();
    await expect(pending).resolves.toEqual({ content: "bash: aborted: the command was killed by the caller's AbortSignal\nwaiting\n", isError: true });
  });

  it("stops a command when the caller aborts", async () => {
    const controller = new AbortController();
    const pending = bash.execute({ command: ": > started; exec sleep 5" }, controller.signal);
    // Abort once the command runs: an abort before the spawn is answered differently (it never starts).
    await until(() => access(join(box.root, "started")).then(() => true, () => false));
    controller.abort();
    await expect(pending).resolves.toEqual({ content: "bash: aborted: the command was killed by the caller's AbortSignal", isError: true });
  });

  it("answers invalid input with the chapter's message", async () => {
    await expect(bash.execute({ command: ["ls"] })).resolves.toEqual({ content: "invalid bash input: command must be a string", isError: true });
  });
});

describe("bashLimits", () => {
  it("defaults to the chapter's 10 s, 64 KiB and 64 KiB", () => {
    expect(bashLimits()).toEqual({ timeoutMs: 10_000, maxBuffer: 65_536, maxOutputChars: 65_536 });
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])("refuses %s, which would switch a limit off", (value) => {
    expect(() => bashLimits({ timeoutMs: value })).toThrow(/bash limit timeoutMs must be a positive number/);
  });
});

async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let waited = 0; waited < 5_000; waited += 10) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("condition never held");
}
