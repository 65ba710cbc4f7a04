// The verified tools' walk (openBeneath, replaceBeneath, pinRoot): refusing descriptors that report a path
// outside the root, taking back only what a failed write created, the walk's own rules past an approving
// check, every descriptor given back, and the helpers that name entries and reword errors.
import { execFileSync } from "node:child_process";
import { readSync } from "node:fs";
import { lstat, mkdir, readFile, readdir, rename, rm, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { type Sandbox } from "../src/kit/sandbox/sandbox.js";
import { useSandbox } from "./support/sandbox.js";
import { withMkdirTrap } from "../src/kit/toctou/fs-trap.js";
import { MAX_SYMLINKS, errorCode, openBeneath, pinRoot, replaceBeneath, reword, throughDescriptor } from "../src/verified/open-beneath.js";
import { procfsProblem } from "../src/verified/procfs.js";
import { createVerifiedWorkspaceTools } from "../src/verified/verified-tools.js";
import type { Tool } from "../src/gates/tool.js";
import { approvingCheck } from "./support/check-hooks.js";
import { LINUX_PROCFS, describeNeeding } from "./support/platform.js";

let box: Sandbox;
const sandbox = useSandbox();
beforeEach(async () => {
  box = sandbox.current;
});

const REFUSE_HARDLINKS = { allowHardlinks: false };
const REPLACE = { ...REFUSE_HARDLINKS, namesDirectory: false, signal: undefined };

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

// The walk verifies every descriptor against the root's real path as the tool last read it. Pinning
// the workspace's parent while declaring `ws` the root reproduces, without a race, what a lost rename race
// looks like: descriptors that are fine for the walk but report a path outside the declared root.
describeNeeding(LINUX_PROCFS, "openBeneath when a descriptor reports a path outside the root", () => {
  it("refuses the temporary file it created and removes it again", async () => {
    const before = await readdir(dirname(box.root));
    const base = pinRoot(dirname(box.root));
    await expect(replaceBeneath(base, box.root, "planted.txt", "x", REPLACE)).rejects.toThrow("path escapes workspace");
    expect(await readdir(dirname(box.root))).toEqual(before);
  });

  it("refuses a directory it created and removes it again", async () => {
    const base = pinRoot(dirname(box.root));
    await expect(replaceBeneath(base, box.root, "made/planted.txt", "x", REPLACE)).rejects.toThrow("path escapes workspace");
    expect(await exists(join(dirname(box.root), "made"))).toBe(false);
  });

  // Regression, found by `toctou --tools verified --mode race`: a write answered "path escapes
  // workspace; what this call created at ws/race could not be removed: ENOTEMPTY". The walk made
  // ws/race, the racer renamed its own directory over it (Linux lets a rename replace an empty
  // directory), the walk opened the racer's directory by name, was refused, and tried to rmdir it.
  it("leaves alone a directory put in place of the one it just made, and answers the refusal alone", async () => {
    const theirs = join(box.scratch, "theirs");
    await mkdir(theirs);
    await writeFile(join(theirs, "kept.txt"), "not this call's\n");
    const made = join(dirname(box.root), "made");
    const base = pinRoot(dirname(box.root));
    try {
      const takeOver = { springsOn: (path: string) => path.endsWith("/made"), move: () => rename(theirs, made) };
      const opening = withMkdirTrap(takeOver, () => replaceBeneath(base, box.root, "made/planted.txt", "x", REPLACE));
      await expect(opening).rejects.toThrow(/^path escapes workspace$/);
      expect(await readFile(join(made, "kept.txt"), "utf8")).toBe("not this call's\n");
    } finally {
      await rm(made, { recursive: true, force: true });
    }
  });

  it("refuses an existing file without removing or changing it", async () => {
    const before = await readFile(join(box.outside, "secret.txt"), "utf8");
    const base = pinRoot(dirname(box.root));
    await expect(replaceBeneath(base, box.root, "outside/secret.txt", "x", REPLACE)).rejects.toThrow("path escapes workspace");
    expect(await readFile(join(box.outside, "secret.txt"), "utf8")).toBe(before);
  });

  it("refuses to read through an existing directory outside", async () => {
    const base = pinRoot(dirname(box.root));
    await expect(openBeneath(base, box.root, "outside/secret.txt", REFUSE_HARDLINKS)).rejects.toThrow("path escapes workspace");
  });
});

describe("throughDescriptor", () => {
  it.each(["", ".", "..", "a/b", "/abs"])("refuses %j, which is not one path component", (name) => {
    expect(() => throughDescriptor(3, name)).toThrow("not a single path component");
  });

  it("names one entry of the directory a descriptor holds", () => {
    expect(throughDescriptor(7, "..foo")).toBe("/proc/self/fd/7/..foo");
  });
});

describe("reword and errorCode", () => {
  it("leave anything that is not an Error as it is", () => {
    expect(reword("not an error", "/proc/self/fd/9/x", "/ws/x")).toBe("not an error");
  });

  it("leave an error's path alone when it is not the /proc string", () => {
    const error = Object.assign(new Error("EACCES: permission denied, open '/elsewhere'"), { path: "/elsewhere" });
    expect(reword(error, "/proc/self/fd/9/x", "/ws/x")).toMatchObject({ path: "/elsewhere" });
  });

  it.each([
    [Object.assign(new Error("x"), { code: "ENOENT" }), "ENOENT"],
    [Object.assign(new Error("x"), { code: 5 }), undefined],
    [new Error("no code"), undefined],
    [undefined, undefined],
  ])("errorCode of %o is %s", (error, code) => {
    expect(errorCode(error)).toBe(code);
  });

  it("puts the logical path back into an fs error's message and path", () => {
    const error = Object.assign(new Error("ENOENT: no such file or directory, open '/proc/self/fd/9/x'"), {
      code: "ENOENT",
      path: "/proc/self/fd/9/x",
    });
    expect(reword(error, "/proc/self/fd/9/x", "/ws/x")).toMatchObject({
      message: "ENOENT: no such file or directory, open '/ws/x'",
      path: "/ws/x",
      code: "ENOENT",
    });
  });
});

/** Every descriptor this process holds: a walk must give back each one it opened, on every path. */
async function openDescriptors(): Promise<number> {
  return (await readdir("/proc/self/fd")).length;
}

describeNeeding(LINUX_PROCFS, "pinRoot", () => {
  it("holds the root O_PATH: the descriptor names the directory but cannot read it (EBADF, where O_RDONLY gives EISDIR)", () => {
    const pinned = pinRoot(box.root);
    expect(() => readSync(pinned.fd, Buffer.alloc(1))).toThrow(expect.objectContaining({ code: "EBADF" }));
  });

  it("refuses a root that is a file", async () => {
    await writeFile(join(box.root, "file"), "x");
    expect(() => pinRoot(join(box.root, "file"))).toThrow(/is not a directory$/);
  });
});

describeNeeding(LINUX_PROCFS, "procfsProblem", () => {
  it("closes the descriptor it opened on /", async () => {
    const before = await openDescriptors();
    expect(procfsProblem()).toBeUndefined();
    expect(await openDescriptors()).toBe(before);
  });
});

// The walk's own rules, reached past the chapter's check (a check that approves every path), so each
// answer below is the walk's, not realpath's.
describeNeeding(LINUX_PROCFS, "the walk, past an approving check", () => {
  let read: Tool;
  let write: Tool;
  beforeEach(() => {
    [read, write] = createVerifiedWorkspaceTools(box.root, { fsApi: approvingCheck(box.root) }) as [Tool, Tool];
  });

  it("restarts from the root for an absolute link met in a subdirectory", async () => {
    await mkdir(join(box.root, "real"));
    await mkdir(join(box.root, "sub"));
    await writeFile(join(box.root, "real", "x.txt"), "at the root's real/");
    await symlink(join(box.root, "real"), join(box.root, "sub", "abs"));
    await expect(read.execute({ path: "sub/abs/x.txt" })).resolves.toEqual({ content: "at the root's real/" });
  });

  it("walks ./ in a link's target", async () => {
    await writeFile(join(box.root, "real.txt"), "dotted");
    await symlink("./real.txt", join(box.root, "dot"));
    await expect(read.execute({ path: "dot" })).resolves.toEqual({ content: "dotted" });
  });

  it(`follows ${MAX_SYMLINKS} links and refuses the ${MAX_SYMLINKS + 1}st, as the kernel does`, async () => {
    await writeFile(join(box.root, "end.txt"), "the end of the chain");
    for (let link = 1; link <= MAX_SYMLINKS + 1; link++) await symlink(link === 1 ? "end.txt" : `l${link - 1}`, join(box.root, `l${link}`));
    await expect(read.execute({ path: `l${MAX_SYMLINKS}` })).resolves.toEqual({ content: "the end of the chain" });
    await expect(read.execute({ path: `l${MAX_SYMLINKS + 1}` })).resolves.toEqual({
      content: `read: ELOOP: more than ${MAX_SYMLINKS} symbolic links on the way to l1`,
      isError: true,
    });
  });

  it("answers a link that ends at a subdirectory as the chapter answers a directory, naming it", async () => {
    await mkdir(join(box.root, "d", "x"), { recursive: true });
    await symlink("d/x/..", join(box.root, "up"));
    await expect(read.execute({ path: "up" })).resolves.toEqual({ content: "read: not a regular file", isError: true });
    await expect(write.execute({ path: "up", content: "x" })).resolves.toEqual({
      content: `write: EISDIR: illegal operation on a directory, open 'd'`,
      isError: true,
    });
  });

  it("creates nothing for a read, and names the first missing directory", async () => {
    await expect(read.execute({ path: "nope/deeper/missing.txt" })).resolves.toEqual({
      content: `read: ENOENT: no such file or directory, open 'nope'`,
      isError: true,
    });
    expect(await exists(join(box.root, "nope"))).toBe(false);
  });

  it.each([
    // A leaf is looked up before it is opened (open-beneath.ts, replaceLeaf), a directory opened at once.
    { label: "a new file's name", path: `fresh/${"n".repeat(256)}`, call: "lstat", failsAt: `fresh/${"n".repeat(256)}` },
    { label: "a new directory's name", path: `fresh/${"n".repeat(256)}/x`, call: "open", failsAt: `fresh/${"n".repeat(256)}` },
  ])("answers ENAMETOOLONG for $label with the call that failed, and takes back fresh/", async ({ path, call, failsAt }) => {
    await expect(write.execute({ path, content: "x" })).resolves.toEqual({
      content: `write: ENAMETOOLONG: name too long, ${call} '${failsAt}'`,
      isError: true,
    });
    expect(await readdir(box.root)).toEqual([]);
  });

  it("takes back two levels of new directories, the deeper first", async () => {
    await expect(write.execute({ path: `a/b/${"n".repeat(256)}`, content: "x" })).resolves.toMatchObject({ isError: true });
    expect(await readdir(box.root)).toEqual([]);
  });

  it("gives back every descriptor: through .., an absolute restart, a refusal and a failure", async () => {
    await mkdir(join(box.root, "a", "b"), { recursive: true });
    await writeFile(join(box.root, "a", "t.txt"), "chained");
    await symlink("../t.txt", join(box.root, "a", "b", "up"));
    await symlink(join(box.root, "a"), join(box.root, "a", "b", "abs"));
    execFileSync("mkfifo", [join(box.root, "a", "pipe")]);
    const before = await openDescriptors();
    await expect(read.execute({ path: "a/b/up" })).resolves.toEqual({ content: "chained" });
    await expect(read.execute({ path: "a/b/abs/t.txt" })).resolves.toEqual({ content: "chained" });
    await expect(read.execute({ path: "a/b/abs/pipe" })).resolves.toEqual({ content: "read: not a regular file", isError: true });
    await expect(write.execute({ path: `a/b/new/${"n".repeat(256)}`, content: "x" })).resolves.toMatchObject({ isError: true });
    expect(await openDescriptors()).toBe(before);
  });
});
