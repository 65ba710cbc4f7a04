import { lstat, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { type Sandbox } from "../src/kit/sandbox/sandbox.js";
import { useSandbox } from "./support/sandbox.js";
import { withMkdirTrap } from "../src/kit/toctou/fs-trap.js";
import { openBeneath, pinRoot, reword, throughDescriptor } from "../src/verified/open-beneath.js";
import { LINUX_PROCFS, describeNeeding } from "./support/platform.js";

let box: Sandbox;
const sandbox = useSandbox();
beforeEach(async () => {
  box = sandbox.current;
});

const REFUSE_HARDLINKS = { allowHardlinks: false };

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
  it("refuses a file it created and removes it again", async () => {
    const base = pinRoot(dirname(box.root));
    await expect(openBeneath(base, box.root, "planted.txt", "write", REFUSE_HARDLINKS)).rejects.toThrow("path escapes workspace");
    expect(await exists(join(dirname(box.root), "planted.txt"))).toBe(false);
  });

  it("refuses a directory it created and removes it again", async () => {
    const base = pinRoot(dirname(box.root));
    await expect(openBeneath(base, box.root, "made/planted.txt", "write", REFUSE_HARDLINKS)).rejects.toThrow("path escapes workspace");
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
      const opening = withMkdirTrap(takeOver, () => openBeneath(base, box.root, "made/planted.txt", "write", REFUSE_HARDLINKS));
      await expect(opening).rejects.toThrow(/^path escapes workspace$/);
      expect(await readFile(join(made, "kept.txt"), "utf8")).toBe("not this call's\n");
    } finally {
      await rm(made, { recursive: true, force: true });
    }
  });

  it("refuses an existing file without removing or changing it", async () => {
    const before = await readFile(join(box.outside, "secret.txt"), "utf8");
    const base = pinRoot(dirname(box.root));
    await expect(openBeneath(base, box.root, "outside/secret.txt", "write", REFUSE_HARDLINKS)).rejects.toThrow("path escapes workspace");
    expect(await readFile(join(box.outside, "secret.txt"), "utf8")).toBe(before);
  });

  it("refuses to read through an existing directory outside", async () => {
    const base = pinRoot(dirname(box.root));
    await expect(openBeneath(base, box.root, "outside/secret.txt", "read", REFUSE_HARDLINKS)).rejects.toThrow("path escapes workspace");
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

describe("reword", () => {
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
