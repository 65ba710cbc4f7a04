// createVerifiedWorkspaceTools: the chapter's contract, every refusal of the chapter, a descriptor walk
// that holds the boundary alone, the decisions stricter than the chapter, the hardlink policy, bash in the
// pinned directory, writes that cannot tear, and execute-only directories as an unprivileged user.
import { execFile, execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { chmod, link, mkdir, mkdtemp, readFile, readdir, readlink, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, expect, it } from "vitest";
import { LINUX_PROCFS, ROOT_TO_DROP, describeNeeding } from "./support/platform.js";
import { TOOL_SETS } from "../src/kit/sandbox/tool-sets.js";
import { INVALID_READ_INPUTS, INVALID_WRITE_INPUTS } from "../fixtures/invalid-inputs.js";
import { INSIDE_WRITES, READ_ESCAPES, WRITE_ESCAPES, plantEscapeLinks } from "../fixtures/path-scenarios.js";
import { SECRET, type Sandbox } from "../src/kit/sandbox/sandbox.js";
import { useSandbox } from "./support/sandbox.js";
import type { Tool } from "../src/gates/tool.js";
import { createVerifiedWorkspaceTools } from "../src/verified/verified-tools.js";
import { createWorkspaceTools } from "../src/tools/workspace-tools.js";
import { approvingCheck } from "./support/check-hooks.js";

const run = promisify(execFile);
const TOOL_SETS_MODULE = fileURLToPath(new URL("../src/kit/sandbox/tool-sets.ts", import.meta.url));
const TSX = createRequire(import.meta.url).resolve("tsx");

let box: Sandbox;
let read: Tool;
let write: Tool;
const sandbox = useSandbox();
beforeEach(async () => {
  box = sandbox.current;
  [read, write] = createVerifiedWorkspaceTools(box.root) as [Tool, Tool, Tool];
});

describeNeeding(LINUX_PROCFS, "the chapter's contract", () => {
  it("has the chapter's specs, in the chapter's order", () => {
    const tools = createVerifiedWorkspaceTools(box.root);
    expect(tools.map((tool) => tool.spec)).toEqual(createWorkspaceTools(box.root).map((tool) => tool.spec));
  });

  it.each(INVALID_READ_INPUTS.map((input) => [input]))("read answers invalid input %j with the chapter's message", async (input) => {
    await expect(read.execute(input)).resolves.toEqual({ content: "invalid read input: path must be a string", isError: true });
  });

  it.each(INVALID_WRITE_INPUTS.map((input) => [input]))("write answers invalid input %j with the chapter's message", async (input) => {
    await expect(write.execute(input)).resolves.toEqual({ content: "invalid write input: path and content must be strings", isError: true });
  });

  it("reads a file and truncates one of 18 000 characters with the exact count", async () => {
    await writeFile(join(box.root, "a.txt"), "hello");
    await writeFile(join(box.root, "big.txt"), "H".repeat(8_000) + "M".repeat(2_000) + "T".repeat(8_000));
    await expect(read.execute({ path: "a.txt" })).resolves.toEqual({ content: "hello" });
    await expect(read.execute({ path: "big.txt" })).resolves.toEqual({
      content: `${"H".repeat(8_000)}\n[truncated 2000 characters]\n${"T".repeat(8_000)}`,
    });
  });

  it("answers a missing file with ENOENT naming the path, not a /proc string", async () => {
    const result = await read.execute({ path: "missing.txt" });
    expect(result).toMatchObject({ isError: true, content: expect.stringMatching(/^read: ENOENT/) });
    expect(result.content).not.toContain("/proc/self/fd");
  });

  it("replaces an existing longer file completely", async () => {
    await writeFile(join(box.root, "a.txt"), "a much longer old content");
    await expect(write.execute({ path: "a.txt", content: "new" })).resolves.toEqual({ content: "wrote 3 bytes to a.txt" });
    expect(await readFile(join(box.root, "a.txt"), "utf8")).toBe("new");
  });

  it("writes an empty file for empty content", async () => {
    await expect(write.execute({ path: "empty.txt", content: "" })).resolves.toEqual({ content: "wrote 0 bytes to empty.txt" });
    expect(await readFile(join(box.root, "empty.txt"), "utf8")).toBe("");
  });

  it("runs bash in the real root, even when the root is given through a symlink", async () => {
    await symlink(box.root, join(box.scratch, "alias"));
    const bash = createVerifiedWorkspaceTools(join(box.scratch, "alias"))[2] as Tool;
    await expect(bash.execute({ command: "pwd -P; pwd" })).resolves.toEqual({ content: `${box.root}\n${box.root}\n` });
  });
});

describeNeeding(LINUX_PROCFS, "everything the chapter refuses is refused", () => {
  it.each(READ_ESCAPES)("read $label", async ({ path }) => {
    await plantEscapeLinks(box);
    const result = await read.execute({ path: path(box) });
    expect(result).toEqual({ content: "read: path escapes workspace", isError: true });
  });

  it.each(WRITE_ESCAPES)("write $label", async ({ path }) => {
    await plantEscapeLinks(box);
    await expect(write.execute({ path: path(box), content: "pwned" })).resolves.toEqual({ content: "write: path escapes workspace", isError: true });
  });
});

// With a check that approves everything, the chapter's tools escape on every row; the verified tools
// must still refuse them all, because the walk from the root descriptor trusts no earlier answer.
describeNeeding(LINUX_PROCFS, "the descriptor walk alone holds the boundary", () => {
  it("control: the chapter's read escapes when its check approves everything", async () => {
    await plantEscapeLinks(box);
    const [chapterRead] = createWorkspaceTools(box.root, { fsApi: approvingCheck(box.root) });
    await expect(chapterRead.execute({ path: "escape-dir/secret.txt" })).resolves.toEqual({ content: `${SECRET} outside\n` });
  });

  it.each(READ_ESCAPES)("read $label", async ({ path }) => {
    await plantEscapeLinks(box);
    const [blindRead] = createVerifiedWorkspaceTools(box.root, { fsApi: approvingCheck(box.root) }) as [Tool];
    const result = await blindRead.execute({ path: path(box) });
    expect(result).toEqual({ content: "read: path escapes workspace", isError: true });
  });

  it.each(WRITE_ESCAPES)("write $label", async ({ path }) => {
    await plantEscapeLinks(box);
    const [, blindWrite] = createVerifiedWorkspaceTools(box.root, { fsApi: approvingCheck(box.root) }) as [Tool, Tool];
    await expect(blindWrite.execute({ path: path(box), content: "pwned" })).resolves.toEqual({
      content: "write: path escapes workspace",
      isError: true,
    });
  });

  it("names the path in its own errors, not the /proc string it opened", async () => {
    const [blindRead] = createVerifiedWorkspaceTools(box.root, { fsApi: approvingCheck(box.root) }) as [Tool];
    await expect(blindRead.execute({ path: "nope/missing.txt" })).resolves.toEqual({
      content: `read: ENOENT: no such file or directory, open 'nope'`,
      isError: true,
    });
  });

  it("ends a symlink loop with ELOOP instead of walking forever", async () => {
    await symlink("b", join(box.root, "a"));
    await symlink("a", join(box.root, "b"));
    const [blindRead] = createVerifiedWorkspaceTools(box.root, { fsApi: approvingCheck(box.root) }) as [Tool];
    await expect(blindRead.execute({ path: "a" })).resolves.toEqual({
      content: `read: ELOOP: more than 40 symbolic links on the way to a`,
      isError: true,
    });
  });
});

describeNeeding(LINUX_PROCFS, "legitimate paths still work", () => {
  it.each(INSIDE_WRITES)("write $label", async ({ path, lands, setup }) => {
    await setup?.(box);
    await expect(write.execute({ path, content: "in" })).resolves.toEqual({ content: `wrote 2 bytes to ${path}` });
    expect(await readFile(join(box.root, lands), "utf8")).toBe("in");
    await expect(read.execute({ path })).resolves.toEqual({ content: "in" });
  });

  it("follows a file symlink that stays inside, for read and write, and the link stays", async () => {
    await writeFile(join(box.root, "real.txt"), "old");
    await symlink("real.txt", join(box.root, "current"));
    await expect(read.execute({ path: "current" })).resolves.toEqual({ content: "old" });
    await expect(write.execute({ path: "current", content: "new" })).resolves.toEqual({ content: "wrote 3 bytes to current" });
    expect(await readFile(join(box.root, "real.txt"), "utf8")).toBe("new");
    expect(await readlink(join(box.root, "current"))).toBe("real.txt");
  });

  it("follows an absolute symlink that spells the root's real path", async () => {
    await mkdir(join(box.root, "real"));
    await writeFile(join(box.root, "real", "x.txt"), "via absolute");
    await symlink(join(box.root, "real"), join(box.root, "abs"));
    await expect(read.execute({ path: "abs/x.txt" })).resolves.toEqual({ content: "via absolute" });
  });

  it("follows a chain of relative symlinks through subdirectories and ..", async () => {
    await mkdir(join(box.root, "a", "b"), { recursive: true });
    await writeFile(join(box.root, "a", "t.txt"), "chained");
    await symlink("../t.txt", join(box.root, "a", "b", "up"));
    await symlink("a/b/up", join(box.root, "entry"));
    await expect(read.execute({ path: "entry" })).resolves.toEqual({ content: "chained" });
  });

  it("creates nested directories under an inside symlink, at its target", async () => {
    await mkdir(join(box.root, "real"));
    await symlink("real", join(box.root, "alias"));
    await write.execute({ path: "alias/new/deep/x.txt", content: "in" });
    expect(await readdir(join(box.root, "real", "new", "deep"))).toEqual(["x.txt"]);
  });
});

// A decided divergence from the chapter, which admits nothing the chapter refuses: a symlink whose
// target climbs above the root and comes back is refused, as Go's os.Root refuses it, because
// following it would mean looking up names in directories outside.
describeNeeding(LINUX_PROCFS, "stricter than the chapter, by decision", () => {
  it("refuses a file symlink whose target climbs above the root and comes back", async () => {
    await writeFile(join(box.root, "x.txt"), "inside");
    await symlink("../ws/x.txt", join(box.root, "back"));
    await expect(createWorkspaceTools(box.root)[0]?.execute({ path: "back" })).resolves.toEqual({ content: "inside" });
    await expect(read.execute({ path: "back" })).resolves.toEqual({ content: "read: path escapes workspace", isError: true });
  });

  it("refuses a directory symlink whose target climbs above the root and comes back", async () => {
    await mkdir(join(box.root, "real"));
    await writeFile(join(box.root, "real", "x.txt"), "inside");
    await symlink("../ws/real", join(box.root, "back"));
    await expect(createWorkspaceTools(box.root)[0]?.execute({ path: "back/x.txt" })).resolves.toEqual({ content: "inside" });
    await expect(read.execute({ path: "back/x.txt" })).resolves.toEqual({ content: "read: path escapes workspace", isError: true });
  });
});

// Review finding 8: both writers answered success and the file held B's bytes then A's tail.
describeNeeding(LINUX_PROCFS, "writes cannot tear", () => {
  it("leaves one writer's content whole when two write one new path at once, round after round", async () => {
    const big = "A".repeat(3 * 1024 * 1024);
    const small = "B".repeat(1024 * 1024);
    for (let round = 0; round < 10; round++) {
      const path = `race-${round}.txt`;
      const answers = await Promise.all([write.execute({ path, content: big }), write.execute({ path, content: small })]);
      expect(answers).toEqual([{ content: `wrote ${big.length} bytes to ${path}` }, { content: `wrote ${small.length} bytes to ${path}` }]);
      expect([big, small]).toContain(await readFile(join(box.root, path), "utf8"));
    }
    expect((await readdir(box.root)).filter((name) => name.startsWith(".write-"))).toEqual([]);
  });

  it("keeps the mode of the file it replaces, and gives a new file the umask's", async () => {
    await writeFile(join(box.root, "script.sh"), "old");
    await chmod(join(box.root, "script.sh"), 0o750);
    await write.execute({ path: "script.sh", content: "new" });
    expect((await stat(join(box.root, "script.sh"))).mode & 0o7777).toBe(0o750);
    await write.execute({ path: "fresh.txt", content: "new" });
    expect((await stat(join(box.root, "fresh.txt"))).mode & 0o7777).toBe(0o666 & ~process.umask());
  });
});

describeNeeding(LINUX_PROCFS, "only regular files, and never a blocked call", () => {
  it("refuses to read a directory, a FIFO or the root", async () => {
    await mkdir(join(box.root, "dir"));
    execFileSync("mkfifo", [join(box.root, "pipe")]);
    for (const path of ["dir", "pipe", ""]) {
      await expect(read.execute({ path })).resolves.toEqual({ content: "read: not a regular file", isError: true });
    }
  });

});

describeNeeding(LINUX_PROCFS, "hardlink policy", () => {
  it("refuses by default to read a file with another link, which may be outside", async () => {
    await link(join(box.outside, "secret.txt"), join(box.root, "k"));
    const result = await read.execute({ path: "k" });
    expect(result).toEqual({
      content: "read: refused: the file has 2 hard links, and another of them may be outside the workspace (allowHardlinks accepts this)",
      isError: true,
    });
  });

  it("refuses by default to write a file with another link, and leaves it unchanged", async () => {
    await link(join(box.outside, "secret.txt"), join(box.root, "k"));
    await expect(write.execute({ path: "k", content: "pwned" })).resolves.toMatchObject({ isError: true, content: expect.stringMatching(/^write: refused: the file has 2 hard links/) });
    // useSandbox checks after each test that the outside name still holds the secret
  });

  it("with allowHardlinks, reads a file linked twice, and write replaces it under the name written only", async () => {
    const [lenientRead, lenientWrite] = createVerifiedWorkspaceTools(box.root, { allowHardlinks: true }) as [Tool, Tool];
    await writeFile(join(box.root, "a.txt"), "shared");
    await link(join(box.root, "a.txt"), join(box.root, "b.txt"));
    await expect(lenientRead.execute({ path: "b.txt" })).resolves.toEqual({ content: "shared" });
    await expect(lenientWrite.execute({ path: "b.txt", content: "changed" })).resolves.toEqual({ content: "wrote 7 bytes to b.txt" });
    expect(await readFile(join(box.root, "b.txt"), "utf8")).toBe("changed");
    expect(await readFile(join(box.root, "a.txt"), "utf8")).toBe("shared");
  });
});

describeNeeding(LINUX_PROCFS, "the root is pinned at construction", () => {
  it("stays the directory it was when the path given for it is re-pointed", async () => {
    const alias = join(box.scratch, "alias");
    await symlink(box.root, alias);
    const [pinnedRead, pinnedWrite] = createVerifiedWorkspaceTools(alias) as [Tool, Tool];
    await writeFile(join(box.root, "a.txt"), "pinned");
    await rename(alias, join(box.scratch, "old-alias"));
    await symlink(box.outside, alias);
    await expect(pinnedRead.execute({ path: "a.txt" })).resolves.toEqual({ content: "pinned" });
    await expect(pinnedWrite.execute({ path: "new.txt", content: "in" })).resolves.toEqual({ content: "wrote 2 bytes to new.txt" });
    expect(await readFile(join(box.root, "new.txt"), "utf8")).toBe("in");
  });

  // Review finding 2: bash was built on the root's path string, resolved at its first call, so after
  // this swap read and write still refused while bash ran `cat secret.txt` in the outside directory.
  it("starts bash in the pinned directory itself after the root's path is swapped for a symlink to outside", async () => {
    const bash = createVerifiedWorkspaceTools(box.root)[2] as Tool;
    await writeFile(join(box.root, "secret.txt"), "the workspace's own\n");
    const parked = join(box.scratch, "ws-moved");
    await rename(box.root, parked);
    await symlink(box.outside, box.root);
    try {
      await expect(bash.execute({ command: "pwd -P; cat secret.txt" })).resolves.toEqual({ content: `${parked}\nthe workspace's own\n` });
    } finally {
      await rm(box.root);
      await rename(parked, box.root);
    }
  });

  it("refuses to construct over a root that is not a directory", () => {
    expect(() => createVerifiedWorkspaceTools(join(box.root, "missing"))).toThrow(/ENOENT/);
  });
});

// Review finding 9: each directory was opened O_RDONLY, so a directory the agent's user may search but
// not list (mode 0311) stopped the verified tools, while the kernel's own walk (the chapter's tools)
// passes it. Root passes every permission check, so the call runs in a child as uid 65534.
describeNeeding(ROOT_TO_DROP, "an execute-only directory, as an unprivileged user", () => {
  it.each([...TOOL_SETS.keys()])("the %s tools read a file inside it", async (name) => {
    const base = await mkdtemp(join(tmpdir(), "workspace-gates-exec-only-"));
    try {
      const root = join(base, "ws");
      await mkdir(join(root, "locked"), { recursive: true });
      await writeFile(join(root, "locked", "f.txt"), "behind a directory that cannot be listed\n");
      await chmod(base, 0o755);
      await chmod(join(root, "locked"), 0o311);
      // The child loads the modules as root (the checkout need not be readable by uid 65534), then drops to it for good.
      const script = `import { TOOL_SETS } from ${JSON.stringify(TOOL_SETS_MODULE)};
        process.setgid(65534);
        process.setuid(65534);
        const [read] = TOOL_SETS.get(process.argv[1]).create(process.argv[2]);
        process.stdout.write(JSON.stringify(await read.execute({ path: "locked/f.txt" })));`;
      const { stdout } = await run(process.execPath, ["--import", TSX, "--input-type=module", "-e", script, name, root], { cwd: base });
      expect(JSON.parse(stdout)).toEqual({ content: "behind a directory that cannot be listed\n" });
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });

  it("control: the directory really cannot be listed by that user", async () => {
    const base = await mkdtemp(join(tmpdir(), "workspace-gates-exec-only-"));
    try {
      await mkdir(join(base, "locked"));
      await chmod(base, 0o755);
      await chmod(join(base, "locked"), 0o311);
      await expect(run("ls", [join(base, "locked")], { uid: 65534, gid: 65534 })).rejects.toThrow(/Permission denied/);
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });
});
