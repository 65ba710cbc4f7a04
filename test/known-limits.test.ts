// The known limits of the chapter's tools, as executable evidence: each test shows what the gates
// let through (or what they still hold) in the situations SECURITY.md lists under "What the gates do
// not stop", for every tool set of the registry; where a set closes a limit, its row says so. A test
// here that starts failing means a limit changed: update SECURITY.md with it.
import { realpathSync } from "node:fs";
import { constants, link, open, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import { join, win32 } from "node:path";
import { describe, expect, it } from "vitest";
import { POSIX_FIFO, POSIX_SHELL, describeNeeding } from "./support/platform.js";
import { runAgent, scriptedProvider } from "../src/agent/agent.js";
import { approveAll } from "../src/agent/approval.js";
import { SECRET, type Sandbox, createSandbox } from "../src/kit/sandbox/sandbox.js";
import type { Tool, ToolResult } from "../src/gates/tool.js";
import { isInside } from "../src/gates/is-inside.js";
import type { ToolSet } from "../src/kit/sandbox/tool-sets.js";
import { hardlinkRefusal } from "../src/verified/open-beneath.js";
import { useSandbox } from "./support/sandbox.js";
import { describeEachToolSet } from "./support/tool-sets.js";

// Short enough for the kill test, long enough for a shell to start on a loaded machine.
const FAST_BASH = { timeoutMs: 2_000, maxBuffer: 1024, maxOutputChars: 1024 };

function toolsFor(toolSet: ToolSet, box: Sandbox): { read: Tool; write: Tool; bash: Tool } {
  const [read, write, bash] = toolSet.create(box.root, { bash: FAST_BASH }) as [Tool, Tool, Tool];
  return { read, write, bash };
}

describeEachToolSet("known limits", (toolSet) => {
  // A sandbox of their own, disposed even when an assertion fails; each checks the outside file itself.
  // write replaces the file by rename, so through a hardlink only the inside name gets the new content;
  // read has no such way out. The verified tools refuse a file with a second link by default.
  describe("hardlinks: read leaks the outside file through the chapter's tools, write never changes it", () => {
    const OVERWRITE = "overwritten through a hardlink";
    const SECRET_TEXT = `${SECRET} outside\n`;
    const passes = toolSet.name === "chapter";
    const refused = (tool: string) => ({ content: `${tool}: ${hardlinkRefusal(2)}`, isError: true });
    const cases = [
      {
        tool: "read" as const,
        input: { path: "k" },
        answer: passes ? { content: SECRET_TEXT } : refused("read"),
        insideAfter: SECRET_TEXT,
      },
      {
        tool: "write" as const,
        input: { path: "k", content: OVERWRITE },
        answer: passes ? { content: `wrote ${OVERWRITE.length} bytes to k` } : refused("write"),
        insideAfter: passes ? OVERWRITE : SECRET_TEXT,
      },
    ];

    it.each(cases)("$tool through a hardlink made inside to the outside file", async ({ tool, input, answer, insideAfter }) => {
      const box = await createSandbox();
      try {
        const secret = join(box.outside, "secret.txt");
        await link(secret, join(box.root, "k"));
        await expect(toolsFor(toolSet, box)[tool].execute(input)).resolves.toEqual(answer);
        expect(await readFile(join(box.root, "k"), "utf8")).toBe(insideAfter);
        expect(await readFile(secret, "utf8")).toBe(`${SECRET} outside\n`);
        expect(await box.canaryChanges()).toEqual([]);
      } finally {
        await box.dispose();
      }
    });
  });

  describe("with the canaries unchanged", () => {
    const sandbox = useSandbox();

    it("a dangling symlink inside tells whether its outside target exists", async () => {
      const box = sandbox.current;
      await symlink("../outside/missing.txt", join(box.root, "to-missing"));
      await symlink("../outside/secret.txt", join(box.root, "to-secret"));
      const { read } = toolsFor(toolSet, box);
      await expect(read.execute({ path: "to-missing" })).resolves.toEqual({ content: "read: ENOENT: no such file or directory, realpath 'to-missing'", isError: true });
      await expect(read.execute({ path: "to-secret" })).resolves.toEqual({ content: "read: path escapes workspace", isError: true });
    });

    // The limit follows from how the lookups are made: on the caller's thread (they cost less than a
    // trip through the thread pool, docs/bench.md), so a filesystem that hangs a lookup (a dead network
    // mount) holds the whole thread, and the read time bound cannot fire until the lookup returns.
    it("the path check's realpath runs on the caller's thread, so a lookup that hangs holds it", async () => {
      const box = sandbox.current;
      await writeFile(join(box.root, "a.txt"), "x");
      const { read } = toolsFor(toolSet, box);
      const real = realpathSync.native;
      const events: string[] = [];
      // The check's lookup of the file hangs for 200 ms, as on a stuck mount; a timer is due 20 ms in.
      realpathSync.native = ((...args: Parameters<typeof real>) => {
        if (String(args[0]) === join(box.root, "a.txt")) {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
          events.push("lookup returned");
        }
        return real(...args);
      }) as typeof real;
      const due = new Promise<void>((resolve) => setTimeout(() => resolve(void events.push("timer fired")), 20));
      try {
        await expect(read.execute({ path: "a.txt" })).resolves.toEqual({ content: "x" });
      } finally {
        realpathSync.native = real;
      }
      await due;
      // Nothing else ran while the lookup hung: the timer due at 20 ms fired only after it returned.
      expect(events).toEqual(["lookup returned", "timer fired"]);
    });

    describeNeeding(POSIX_SHELL, "bash is not confined by any path gate", () => {
      const cases = [
        {
          label: "cat of the outside secret by its absolute path",
          command: (box: Sandbox) => `cat '${join(box.outside, "secret.txt")}'`,
          output: () => `${SECRET} outside\n`,
        },
        {
          label: "cd out of the root, then work there",
          command: () => "cd ../outside && pwd -P && cat dir/secret.txt",
          output: (box: Sandbox) => `${box.outside}\n${SECRET} outside/dir\n`,
        },
      ];

      it.each(cases)("$label", async ({ command, output }) => {
        const box = sandbox.current;
        await expect(toolsFor(toolSet, box).bash.execute({ command: command(box) })).resolves.toEqual({ content: output(box) });
      });
    });

    // The attacker of the threat model: bash, approved, makes a link to outside, then the model asks
    // read and write to go through it. Run through the agent loop, as a model would drive it.
    describeNeeding(POSIX_SHELL, "a symlink bash creates does not let read or write escape", () => {
      const cases = [
        { label: "a relative link to an outside file", target: () => "../outside/secret.txt", readPath: "link", writePath: "link" },
        { label: "an absolute link to an outside file", target: (box: Sandbox) => join(box.outside, "secret.txt"), readPath: "link", writePath: "link" },
        { label: "a relative link to an outside directory", target: () => "../outside", readPath: "link/secret.txt", writePath: "link/planted.txt" },
        { label: "an absolute link to an outside directory", target: (box: Sandbox) => box.outside, readPath: "link/secret.txt", writePath: "link/planted.txt" },
      ];

      it.each(cases)("$label", async ({ target, readPath, writePath }) => {
        const box = sandbox.current;
        const provider = scriptedProvider([
          { toolCalls: [{ id: "ln", name: "bash", input: { command: `ln -s '${target(box)}' link` } }] },
          {
            toolCalls: [
              { id: "r", name: "read", input: { path: readPath } },
              { id: "w", name: "write", input: { path: writePath, content: "pwned" } },
            ],
          },
          { text: "done" },
        ]);
        const run = await runAgent("escape", { provider, tools: toolSet.create(box.root), beforeToolCall: approveAll });
        expect(run.messages.filter((message) => message.role === "tool")).toEqual([
          { role: "tool", toolCallId: "ln", name: "bash", content: "", isError: false },
          { role: "tool", toolCallId: "r", name: "read", content: "read: path escapes workspace", isError: true },
          { role: "tool", toolCallId: "w", name: "write", content: "write: path escapes workspace", isError: true },
        ]);
        // the link really is there, pointing out: the refusals above are the boundary's, not a missing link's
        expect(await readlink(join(box.root, "link"))).toBe(target(box));
      });
    });

    describeNeeding(POSIX_FIFO, "a FIFO in the workspace", () => {
      // How long a call that should answer at once may take before the test calls it blocked. Generous,
      // for a loaded machine: a call that answers never waits for it.
      const ANSWER_PATIENCE_MS = 5_000;
      const PENDING = "still pending";

      async function settledWithin<T>(call: Promise<T>, ms: number): Promise<T | typeof PENDING> {
        let timer: NodeJS.Timeout | undefined;
        const bound = new Promise<typeof PENDING>((resolve) => {
          timer = setTimeout(() => resolve(PENDING), ms);
        });
        try {
          return await Promise.race([call, bound]);
        } finally {
          clearTimeout(timer);
        }
      }

      async function makeFifo(box: Sandbox): Promise<string> {
        await expect(toolsFor(toolSet, box).bash.execute({ command: "mkfifo pipe" })).resolves.toEqual({ content: "" });
        return join(box.root, "pipe");
      }

      it("read refuses it at once, without waiting for a writer", async () => {
        const box = sandbox.current;
        const fifo = await makeFifo(box);
        const call = toolsFor(toolSet, box).read.execute({ path: "pipe" });
        const outcome = await settledWithin(call, ANSWER_PATIENCE_MS);
        if (outcome === PENDING) {
          // A read tool that opens without O_NONBLOCK waits here for a writer. Be that writer for an
          // instant, so the test fails below instead of leaving a thread blocked on the FIFO forever.
          await (await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK)).close();
          await settledWithin(call, ANSWER_PATIENCE_MS);
        }
        expect(outcome).toEqual({ content: "read: not a regular file", isError: true });
      });

      it("write refuses it at once, without waiting for a reader", async () => {
        const box = sandbox.current;
        const fifo = await makeFifo(box);
        const call: Promise<ToolResult> = toolsFor(toolSet, box).write.execute({ path: "pipe", content: "into the pipe" });
        const outcome = await settledWithin(call, ANSWER_PATIENCE_MS);
        if (outcome === PENDING) {
          // A write tool that opens without O_NONBLOCK waits here for a reader. Be that reader for an
          // instant, so the test fails below instead of leaving a thread blocked on the FIFO forever.
          await (await open(fifo, constants.O_RDONLY | constants.O_NONBLOCK)).close();
          await settledWithin(call, ANSWER_PATIENCE_MS);
        }
        expect(outcome).toEqual({ content: "write: not a regular file", isError: true });
      });
    });
  });
});

describe("win32 folds case, also where a directory is case-sensitive", () => {
  it("takes C:\\data\\WS\\secret.txt as inside C:\\data\\ws, though a case-sensitive NTFS directory makes WS a sibling", () => {
    expect(isInside("C:\\data\\ws", "C:\\data\\WS\\secret.txt", win32)).toBe(true);
    expect(isInside("C:\\data\\ws", "C:\\data\\ws-other\\secret.txt", win32)).toBe(false);
  });
});
