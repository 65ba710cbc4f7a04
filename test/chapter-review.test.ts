/**
 * The security review of issue 15, replayed against the chapter's tools (`createWorkspaceTools`): each
 * finding's exact case as a named regression row, and a property where the finding is a class. The
 * findings that are the contract of every tool set (3, 4, 5, 7, 8, 10) run over each set of the
 * registry; finding 1 is the chapter's own (the verified tools pin the directory itself:
 * test/verified-tools.test.ts). Findings 2, 6 and 9 (verified bash, the agent loop, the verified
 * tools' contract) are tested elsewhere.
 */
import { createServer } from "node:net";
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { execFileSync } from "node:child_process";
import { basename, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import { beforeEach, describe, expect, it } from "vitest";
import { SECRET, type Sandbox } from "../src/kit/sandbox/sandbox.js";
import type { Tool, ToolResult } from "../src/gates/tool.js";
import { workspacePath } from "../src/gates/workspace-path.js";
import { type WorkspaceToolsOptions, createWorkspaceTools } from "../src/tools/workspace-tools.js";
import { TOOL_SETS, type ToolSet } from "../src/kit/sandbox/tool-sets.js";
import { LINUX_PROCFS } from "./support/platform.js";
import { describeEachToolSet } from "./support/tool-sets.js";
import { useSandbox } from "./support/sandbox.js";

let box: Sandbox;
const sandbox = useSandbox();
beforeEach(() => {
  box = sandbox.current;
});

const CHAPTER = TOOL_SETS.get("chapter") as ToolSet;

function toolsAt(root: string, options: WorkspaceToolsOptions = {}, toolSet: ToolSet = CHAPTER): { read: Tool; write: Tool; bash: Tool } {
  const [read, write, bash] = toolSet.create(root, { bash: { timeoutMs: 3_000 }, ...options }) as [Tool, Tool, Tool];
  return { read, write, bash };
}

const TOOLS_MODULE = join(process.cwd(), "src/tools/workspace-tools.ts");
const TOOL_SETS_MODULE = join(process.cwd(), "src/kit/sandbox/tool-sets.ts");
/** tsx's loader by its path, so the child finds it from any working directory. */
const TSX_LOADER = pathToFileURL(join(process.cwd(), "node_modules/tsx/dist/loader.mjs")).href;

/** Runs an ES module script in a child Node (with tsx), under `limits` set by the shell; answers its stdout. */
function inChild(script: string, { cwd, limits = "" }: { cwd?: string; limits?: string }): string {
  return execFileSync("sh", ["-c", `${limits} exec "$0" --import "$1" --input-type=module -e "$2"`, process.execPath, TSX_LOADER, script], {
    encoding: "utf8",
    ...(cwd === undefined ? {} : { cwd }),
  });
}

/** A promise that must settle before `ms`: a hang fails the test instead of stalling it. */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, hung]);
  } finally {
    clearTimeout(timer);
  }
}

/** Replaces the root by a symlink to the outside canary, as a bash command may; puts it back after. */
async function withRootSwapped(body: () => Promise<void>): Promise<void> {
  await rename(box.root, `${box.root}.old`);
  await symlink(box.outside, box.root);
  try {
    await body();
  } finally {
    await rm(box.root);
    await rename(`${box.root}.old`, box.root);
  }
}

describe("finding 1: the root is pinned when the tools are created", () => {
  it("refuses read, write and bash when the root is swapped for a link before the first call", async () => {
    const { read, write, bash } = toolsAt(box.root);
    await withRootSwapped(async () => {
      await expect(read.execute({ path: "secret.txt" })).resolves.toEqual({ content: "read: path escapes workspace", isError: true });
      await expect(write.execute({ path: "pwned.txt", content: "x" })).resolves.toEqual({ content: "write: path escapes workspace", isError: true });
      await expect(bash.execute({ command: "pwd" })).resolves.toEqual({ content: "bash: path escapes workspace", isError: true });
    });
  });

  it("resolves a relative root against the working directory at creation, not at the first call", async () => {
    await writeFile(join(box.root, "here.txt"), "inside");
    // In a child: the test runner's workers cannot change their working directory.
    const script = [
      `import { createWorkspaceTools } from ${JSON.stringify(TOOLS_MODULE)};`,
      `const [read] = createWorkspaceTools(${JSON.stringify(basename(box.root))});`,
      `process.chdir(${JSON.stringify(box.outside)});`,
      `console.log(JSON.stringify(await read.execute({ path: "here.txt" })));`,
    ].join("\n");
    expect(JSON.parse(inChild(script, { cwd: dirname(box.root) }))).toEqual({ content: "inside" });
  });

  it("throws at creation when the root is missing or not a directory, naming the root", async () => {
    expect(() => createWorkspaceTools(join(box.root, "missing"))).toThrow(/^workspace root .*missing.*: ENOENT/);
    await writeFile(join(box.root, "file"), "x");
    expect(() => createWorkspaceTools(join(box.root, "file"))).toThrow(/^workspace root .*file.* is not a directory$/);
    // The check refused before creating anything: a root that appears later stays a different tool set's business.
    await expect(readdir(box.root)).resolves.toEqual(["file"]);
  });

  it("a tool set created later on the same root inherits what an earlier run's background job did to it", async () => {
    const first = toolsAt(box.root);
    // The earlier agent run: an approved bash leaves a job behind that replaces the root by a link.
    const job = `(while [ ! -e go ]; do sleep 0.01; done; mv "$PWD" "$PWD.old" && ln -s '${box.outside}' "$PWD") >/dev/null 2>&1 &`;
    await expect(first.bash.execute({ command: job })).resolves.toEqual({ content: "" });
    await writeFile(join(box.root, "go"), "");
    for (let waited = 0; !(await leadsOutside(box.root)) && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    try {
      // The first set keeps its pinned root; a new set pins whatever the name means now: the outside.
      await expect(first.read.execute({ path: "secret.txt" })).resolves.toEqual({ content: "read: path escapes workspace", isError: true });
      await expect(toolsAt(box.root).read.execute({ path: "secret.txt" })).resolves.toEqual({ content: `${SECRET} outside\n` });
    } finally {
      await rm(box.root);
      await rename(`${box.root}.old`, box.root);
      await rm(join(box.root, "go"));
    }
  });
});

/** Whether `root` now shows the outside canary's secret, that is, the swap has happened. */
async function leadsOutside(path: string): Promise<boolean> {
  return readFile(join(path, "secret.txt")).then(() => true, () => false);
}

describeEachToolSet("finding 3: names are compared without lossy decoding", (toolSet) => {
  it("refuses a link to a sibling whose raw name differs from the root's only in an invalid byte", async () => {
    // Root `w\uFFFDs` (the bytes EF BF BD), sibling `w\xFFs` (one byte 0xFF), which realpath as a
    // string decodes to the same U+FFFD. Both live inside the sandbox's workspace.
    const root = join(box.root, "w\uFFFDs");
    const sibling = Buffer.concat([Buffer.from(`${box.root}/w`), Buffer.from([0xff]), Buffer.from("s")]);
    await mkdir(root);
    await mkdir(sibling);
    await writeFile(Buffer.concat([sibling, Buffer.from("/secret.txt")]), "sibling secret");
    await symlink(Buffer.concat([Buffer.from("../w"), Buffer.from([0xff]), Buffer.from("s")]), join(root, "lnk"));
    const { read, write } = toolsAt(root, {}, toolSet);
    await expect(read.execute({ path: "lnk/secret.txt" })).resolves.toEqual({ content: "read: path escapes workspace", isError: true });
    await expect(write.execute({ path: "lnk/x", content: "planted" })).resolves.toEqual({ content: "write: path escapes workspace", isError: true });
    await expect(readdir(sibling)).resolves.toEqual(["secret.txt"]);
    await expect(workspacePath(root, "lnk/secret.txt", false)).rejects.toThrow("path escapes workspace");
  });

  it("refuses a root whose real name does not survive UTF-8 decoding", async () => {
    const raw = Buffer.concat([Buffer.from(`${box.root}/r`), Buffer.from([0xfe])]);
    await mkdir(raw);
    await symlink(raw, join(box.root, "alias"));
    expect(() => toolSet.create(join(box.root, "alias"))).toThrow(/is not valid UTF-8/);
  });
});

describeEachToolSet("finding 4: what the model may learn about the outside", (toolSet) => {
  // Each kind of outside object, at outside/probe; the same answer must come back for all of them.
  const kinds = {
    missing: async () => undefined,
    file: async (at: string) => writeFile(at, "x"),
    directory: async (at: string) => mkdir(at),
    "link to a file": async (at: string) => symlink("secret.txt", at),
    "dangling link": async (at: string) => symlink("gone", at),
    "link to a directory": async (at: string) => symlink("dir", at),
  };
  const spellings = [
    (outside: string) => `../${basename(outside)}/probe`,
    (outside: string) => join(outside, "probe"),
    () => "out/probe",
    () => "out/probe/deeper",
    () => "out/probe/deeper/",
  ];

  it("answers alike for a missing, file, directory or link outside, however the path reaches it", async () => {
    await symlink(box.outside, join(box.root, "out"));
    const { read, write } = toolsAt(box.root, {}, toolSet);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...spellings), fc.constantFrom("read" as const, "write" as const), async (spell, tool) => {
        const answers = new Set<string>();
        for (const make of Object.values(kinds)) {
          const probe = join(box.outside, "probe");
          await make(probe);
          try {
            const path = spell(box.outside);
            const answer = tool === "read" ? await read.execute({ path }) : await write.execute({ path, content: "x" });
            answers.add(JSON.stringify(answer));
          } finally {
            await rm(probe, { recursive: true, force: true });
          }
        }
        expect([...answers]).toEqual([JSON.stringify({ content: `${tool}: path escapes workspace`, isError: true })]);
      }),
      { numRuns: 30 },
    );
  });

  it("names paths relative to the workspace in every error, never the host's absolute path", async () => {
    await mkdir(join(box.root, "dir"));
    await writeFile(join(box.root, "file"), "x");
    await symlink("gone", join(box.root, "dangling"));
    await symlink("loop", join(box.root, "loop"));
    const { read, write } = toolsAt(box.root, {}, toolSet);
    const names = fc.constantFrom("dir", "file", "dangling", "loop", "missing", "x", "", ".", "a".repeat(300));
    await fc.assert(
      fc.asyncProperty(fc.array(names, { minLength: 1, maxLength: 3 }), fc.boolean(), async (parts, writing) => {
        const path = parts.join("/");
        const answer: ToolResult = writing ? await write.execute({ path, content: "x" }) : await read.execute({ path });
        expect(answer.content).not.toContain(box.root);
        expect(answer.content).not.toContain(dirname(box.root));
      }),
      { numRuns: 80 },
    );
    await rm(join(box.root, "x"), { recursive: true, force: true });
  });

  it("answers README's `read ../etc/passwd` as an escape, whatever lies beside the root", async () => {
    const { read } = toolsAt(box.root, {}, toolSet);
    for (const path of ["../etc/passwd", "../../../../../../../../etc/passwd", "/etc/passwd", "/no/such/file"])
      await expect(read.execute({ path })).resolves.toEqual({ content: "read: path escapes workspace", isError: true });
  });

  it("answers ENOENT for a missing file with the path as the model wrote it, resolved in the workspace", async () => {
    const { read } = toolsAt(box.root, {}, toolSet);
    await expect(read.execute({ path: "sub/../missing.txt" })).resolves.toEqual({
      content: "read: ENOENT: no such file or directory, realpath 'missing.txt'",
      isError: true,
    });
  });
});

describeEachToolSet("finding 5: read and write are bounded in time and honour their signal", (toolSet) => {
  // tmpfs takes a 7 EiB sparse file without using memory; ext4 stops at 16 TiB.
  async function hugeSparseRoot(): Promise<string> {
    const root = await mkdtemp(join(process.platform === "linux" ? "/dev/shm" : box.root, "wg-sparse-"));
    execFileSync("truncate", ["-s", process.platform === "linux" ? "7E" : "1T", join(root, "notes.txt")]);
    return root;
  }

  it("read of a 7 EiB sparse file stops when the signal aborts at 500 ms", async () => {
    const root = await hugeSparseRoot();
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 500);
      const answer = await within(10_000, toolsAt(root, {}, toolSet).read.execute({ path: "notes.txt" }, controller.signal));
      expect(answer).toEqual({ content: "read: aborted: the caller's AbortSignal fired; the read was stopped", isError: true });
    } finally {
      await rm(root, { recursive: true });
    }
  });

  it("read stops at its time bound and names it", async () => {
    const root = await hugeSparseRoot();
    try {
      const answer = await within(10_000, toolsAt(root, { readTimeoutMs: 300 }, toolSet).read.execute({ path: "notes.txt" }));
      expect(answer).toEqual({ content: "read: timeout: the read was stopped after 300 ms", isError: true });
    } finally {
      await rm(root, { recursive: true });
    }
  });

  it("refuses a read time bound that would switch the bound off", () => {
    for (const readTimeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => toolSet.create(box.root, { readTimeoutMs })).toThrow(`readTimeoutMs must be a positive finite number, got ${readTimeoutMs}`);
  });

  it("write with an aborted signal writes nothing and makes no directory", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(toolsAt(box.root, {}, toolSet).write.execute({ path: "new/after-abort.txt", content: "x" }, controller.signal)).resolves.toEqual({
      content: "write: aborted: the caller's AbortSignal fired; nothing was written",
      isError: true,
    });
    await expect(readdir(box.root)).resolves.toEqual([]);
  });

  it("read with an aborted signal reads nothing", async () => {
    await writeFile(join(box.root, "a.txt"), "x");
    const controller = new AbortController();
    controller.abort();
    await expect(toolsAt(box.root, {}, toolSet).read.execute({ path: "a.txt" }, controller.signal)).resolves.toEqual({
      content: "read: aborted: the caller's AbortSignal fired; the read was stopped",
      isError: true,
    });
  });
});

describeEachToolSet("finding 7: bash kills the whole process group and names the rule that fired", (toolSet) => {
  it("answers the exit status of a shell that exits at once while its background job holds stdout", async () => {
    const { bash } = toolsAt(box.root, { bash: { timeoutMs: 1_500 } }, toolSet);
    await expect(bash.execute({ command: "(sleep 4; echo late) & exit 3" })).resolves.toEqual({ content: "bash: exit code 3", isError: true });
  });

  it("kills what the timeout finds still running: a job holding the output after the shell exited, and a shell that ignores SIGTERM", async () => {
    const { bash } = toolsAt(box.root, { bash: { timeoutMs: 800 } }, toolSet);
    for (const [command, answer] of [
      ["sleep 30 & echo $! > bg.pid", "bash: timeout: the shell exited, but a background process kept stdout or stderr open; its process group was killed after 800 ms"],
      ["trap '' TERM; echo $$ > bg.pid; exec sleep 30", "bash: timeout: the command was killed after 800 ms"],
    ]) {
      const answering = bash.execute({ command });
      const pid = await pidIn(join(box.root, "bg.pid"));
      await expect(answering).resolves.toEqual({ content: answer, isError: true });
      expect(await gone(pid)).toBe(true);
      await rm(join(box.root, "bg.pid"));
    }
  });

  it("kills the background job with the shell on timeout and on abort", async () => {
    for (const stop of ["timeout", "abort"] as const) {
      const { bash } = toolsAt(box.root, { bash: { timeoutMs: stop === "timeout" ? 800 : 10_000 } }, toolSet);
      const controller = new AbortController();
      const answering = bash.execute({ command: "sleep 30 >/dev/null 2>&1 & echo $! > bg.pid; sleep 30" }, controller.signal);
      const pid = await pidIn(join(box.root, "bg.pid"));
      if (stop === "abort") controller.abort();
      const answer = await answering;
      expect(answer.content).toBe(
        stop === "timeout" ? "bash: timeout: the command was killed after 800 ms" : "bash: aborted: the command was killed by the caller's AbortSignal",
      );
      expect(await gone(pid)).toBe(true);
      await rm(join(box.root, "bg.pid"));
    }
  });
}, LINUX_PROCFS);

async function pidIn(path: string): Promise<number> {
  for (let waited = 0; waited < 5_000; waited += 10) {
    const text = await readFile(path, "utf8").catch(() => "");
    if (text.endsWith("\n")) return Number(text.trim());
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${path} never held a pid`);
}

/** Whether `pid` is gone (or a zombie) within 5 s. */
async function gone(pid: number): Promise<boolean> {
  for (let waited = 0; waited <= 5_000; waited += 10) {
    const state = await readFile(`/proc/${pid}/stat`, "utf8").then((s) => s.slice(s.lastIndexOf(")") + 2), () => "gone");
    if (state === "gone" || state.startsWith("Z")) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

describeEachToolSet("finding 8: writes cannot tear", (toolSet) => {
  it("two writers at once leave one whole content or the other, never a mix", async () => {
    const { write } = toolsAt(box.root, {}, toolSet);
    const a = "A".repeat(3 * 1024 * 1024);
    const b = "B".repeat(1024 * 1024);
    for (let run = 0; run < 10; run++) {
      const answers = await Promise.all([write.execute({ path: `race${run}.txt`, content: a }), write.execute({ path: `race${run}.txt`, content: b })]);
      expect(answers.map((answer) => answer.isError)).toEqual([undefined, undefined]);
      expect([a, b]).toContain(await readFile(join(box.root, `race${run}.txt`), "utf8"));
    }
    expect((await readdir(box.root)).filter((name) => !name.startsWith("race"))).toEqual([]);
  });

  it("keeps the mode of the file it replaces", async () => {
    await writeFile(join(box.root, "run.sh"), "old", { mode: 0o750 });
    await expect(toolsAt(box.root, {}, toolSet).write.execute({ path: "run.sh", content: "new" })).resolves.toEqual({ content: "wrote 3 bytes to run.sh" });
    expect((await stat(join(box.root, "run.sh"))).mode & 0o7777).toBe(0o750);
  });

  it("writes through a symlink at the leaf to the file it names, and keeps the link", async () => {
    await writeFile(join(box.root, "real.txt"), "old");
    await symlink("real.txt", join(box.root, "alias.txt"));
    await expect(toolsAt(box.root, {}, toolSet).write.execute({ path: "alias.txt", content: "new" })).resolves.toEqual({ content: "wrote 3 bytes to alias.txt" });
    expect(await readFile(join(box.root, "real.txt"), "utf8")).toBe("new");
    await expect(readdir(box.root)).resolves.toEqual(["alias.txt", "real.txt"]);
  });

  it("a write that fails halfway (file size limit) leaves the old content and no temporary file", async () => {
    await writeFile(join(box.root, "kept.txt"), "old content");
    // A child with a 64 KiB file size limit (and SIGXFSZ ignored, so the write fails with EFBIG).
    const script = [
      `import { TOOL_SETS } from ${JSON.stringify(TOOL_SETS_MODULE)};`,
      `const [, write] = TOOL_SETS.get(${JSON.stringify(toolSet.name)}).create(${JSON.stringify(box.root)});`,
      `for (const path of ["kept.txt", "fresh/new.txt"]) console.log(JSON.stringify(await write.execute({ path, content: "x".repeat(1 << 20) })));`,
    ].join("\n");
    const answers = inChild(script, { limits: "trap '' XFSZ; ulimit -f 64;" }).trim().split("\n").map((line) => JSON.parse(line) as ToolResult);
    expect(answers).toEqual([
      { content: expect.stringMatching(/^write: EFBIG: file too large, write$/), isError: true },
      { content: expect.stringMatching(/^write: EFBIG: file too large, write$/), isError: true },
    ]);
    expect(await readFile(join(box.root, "kept.txt"), "utf8")).toBe("old content");
    await expect(readdir(box.root)).resolves.toEqual(["kept.txt"]);
  });
});

describeEachToolSet("finding 10: nits", (toolSet) => {
  it("workspacePath refuses a NUL byte before it resolves the root", async () => {
    await expect(workspacePath(join(box.root, "missing-root"), "a\0b", false)).rejects.toThrow("path must not contain NUL bytes");
  });

  it("bash refuses a signal that is not an AbortSignal instead of running without one", async () => {
    const { read, write, bash } = toolsAt(box.root, {}, toolSet);
    const fake = { aborted: false } as unknown as AbortSignal;
    await expect(bash.execute({ command: "touch ran" }, fake)).resolves.toEqual({ content: "bash: signal must be an AbortSignal; nothing was done", isError: true });
    await expect(read.execute({ path: "x" }, fake)).resolves.toEqual({ content: "read: signal must be an AbortSignal; nothing was done", isError: true });
    await expect(write.execute({ path: "x", content: "x" }, fake)).resolves.toEqual({ content: "write: signal must be an AbortSignal; nothing was done", isError: true });
    await expect(readdir(box.root)).resolves.toEqual([]);
  });

  it("read and write of a socket answer the same rule", async () => {
    const server = createServer();
    const socket = join(box.root, "s.sock");
    await new Promise<void>((done) => server.listen(socket, done));
    try {
      const { read, write } = toolsAt(box.root, {}, toolSet);
      await expect(read.execute({ path: "s.sock" })).resolves.toEqual({ content: "read: not a regular file", isError: true });
      await expect(write.execute({ path: "s.sock", content: "x" })).resolves.toEqual({ content: "write: not a regular file", isError: true });
    } finally {
      await new Promise((done) => server.close(done));
    }
  });

  it.each([
    ["newdir/", "newdir"],
    ["newdir/.", "newdir"],
    ["missing/deeper/..", "missing"],
  ])("write of %s (a directory by its last step) creates neither a file nor a directory", async (path, shown) => {
    await expect(toolsAt(box.root, {}, toolSet).write.execute({ path, content: "x" })).resolves.toEqual({
      content: `write: EISDIR: illegal operation on a directory, open '${shown}'`,
      isError: true,
    });
    await expect(readdir(box.root)).resolves.toEqual([]);
  });
});
