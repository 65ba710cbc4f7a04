import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join, win32 } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { type Sandbox } from "../src/kit/sandbox/sandbox.js";
import { useSandbox } from "./support/sandbox.js";
import { isInside } from "../src/gates/is-inside.js";
import { nearestExistingAncestor, workspacePath } from "../src/gates/workspace-path.js";

let box: Sandbox;
const sandbox = useSandbox();
beforeEach(async () => {
  box = sandbox.current;
  await mkdir(join(box.root, "src"));
  await writeFile(join(box.root, "src", "a.ts"), "export {};\n");
  await symlink(box.outside, join(box.root, "escape"));
  await symlink(join(box.outside, "secret.txt"), join(box.root, "write-link"));
});

// The chapter's table of five scenarios, row for row.
describe("workspacePath: the chapter's five scenarios", () => {
  const rows: { scenario: string; candidate: (box: Sandbox) => string; creating: boolean; expected: "inside" | "escape" }[] = [
    { scenario: "src/a.ts exists: its realpath is inside", candidate: () => "src/a.ts", creating: false, expected: "inside" },
    { scenario: "nested/a.ts is new: its nearest existing parent is inside", candidate: () => "nested/a.ts", creating: true, expected: "inside" },
    { scenario: "escape/x under a directory symlink to outside", candidate: () => "escape/x", creating: true, expected: "escape" },
    { scenario: "write-link is a file symlink to outside", candidate: () => "write-link", creating: true, expected: "escape" },
    { scenario: "<root>-other/x has the root as a string prefix", candidate: (b) => `${b.root}-other/x`, creating: true, expected: "escape" },
  ];
  it.each(rows)("$scenario", async ({ candidate, creating, expected }) => {
    const answer = workspacePath(box.root, candidate(box), creating);
    if (expected === "inside") await expect(answer).resolves.toBe(join(box.root, candidate(box)));
    else await expect(answer).rejects.toThrow("path escapes workspace");
  });
});

describe("workspacePath: direct attacks and legal names", () => {
  it.each([
    ["an absolute path outside", "/etc/passwd", false],
    ["a parent step", "../outside/secret.txt", false],
    ["a parent step, creating", "../outside/new.txt", true],
    ["the parent itself", "..", false],
    ["a path that leaves and names a sibling", "../ws-other/secret.txt", false],
  ])("refuses %s", async (_label, candidate, creating) => {
    await expect(workspacePath(box.root, candidate, creating)).rejects.toThrow("path escapes workspace");
  });

  it.each([
    ["..foo, a name that starts with two dots", "..foo"],
    ["..., a name of three dots", "..."],
    ["a path that leaves and comes back", "../ws/new.txt"],
    ["the root itself", "."],
    ["the empty path, which is the root", ""],
  ])("accepts %s", async (_label, candidate) => {
    await expect(workspacePath(box.root, candidate, true)).resolves.toBe(join(box.root, candidate));
  });

  it("returns the lexically resolved path, not the raw candidate", async () => {
    await mkdir(join(box.root, "a"));
    await expect(workspacePath(box.root, "a/../src/a.ts", false)).resolves.toBe(join(box.root, "src", "a.ts"));
  });

  it("resolves the root through its own symlink, once", async () => {
    const alias = join(box.root, "alias");
    await symlink(box.root, alias);
    await expect(workspacePath(alias, "src/a.ts", false)).resolves.toBe(join(box.root, "src", "a.ts"));
  });

  it("refuses a dangling symlink whose target would be created outside", async () => {
    await symlink(join(box.outside, "planted.txt"), join(box.root, "dangling"));
    await expect(workspacePath(box.root, "dangling", true)).rejects.toThrow(/ENOENT/);
  });
});

describe("nearestExistingAncestor", () => {
  it("walks up to the first entry that exists", async () => {
    await expect(nearestExistingAncestor(join(box.root, "x", "y", "z"))).resolves.toBe(box.root);
  });

  it("stops at a dangling symlink instead of walking past it", async () => {
    await symlink(join(box.outside, "gone"), join(box.root, "dangling"));
    await expect(nearestExistingAncestor(join(box.root, "dangling"))).resolves.toBe(join(box.root, "dangling"));
  });

  it("propagates an error other than ENOENT", async () => {
    await expect(nearestExistingAncestor(join(box.root, "src", "a.ts", "under-a-file"))).rejects.toMatchObject({ code: "ENOTDIR" });
  });

  it("gives up at the filesystem root", async () => {
    const alwaysMissing = {
      lstat: async () => Promise.reject(Object.assign(new Error("ENOENT"), { code: "ENOENT" })),
      realpath: async (path: string) => path,
    };
    await expect(nearestExistingAncestor("/a/b", alwaysMissing as never)).rejects.toThrow("no existing ancestor");
  });
});

describe("isInside", () => {
  it.each([
    ["/work", "/work", true],
    ["/work", "/work/a", true],
    ["/work", "/work/..foo", true],
    ["/work", "/work-other/x", false],
    ["/work", "/work2", false],
    ["/work", "/", false],
    ["/work", "/etc/passwd", false],
  ])("posix: %s contains %s: %s", (root, path, inside) => {
    expect(isInside(root, path)).toBe(inside);
  });

  it("compares case-sensitively under posix, but not under win32 (path.win32.relative ignores case)", () => {
    expect(isInside("/work", "/Work/x")).toBe(false);
    expect(isInside("c:\\work", "C:\\Work\\x", win32)).toBe(true);
  });
});
