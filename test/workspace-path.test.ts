// Gate 3, workspacePath and isInside: the chapter's five scenarios, direct attacks, legal names that
// only look like parent steps, and nearestExistingAncestor walking up on ENOENT only.
import { lstatSync, realpathSync } from "node:fs";
import { lstat, mkdir, realpath, symlink, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, win32 } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { type Sandbox } from "../src/kit/sandbox/sandbox.js";
import { useSandbox } from "./support/sandbox.js";
import { isInside } from "../src/gates/is-inside.js";
import { type FsApi, type Lookups, inWorkspaceTerms, nearestExistingAncestor, throughHandedRoot, workspaceBoundary, workspacePath } from "../src/gates/workspace-path.js";

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

describe("throughHandedRoot", () => {
  // Survived a gate run: with `isAbsolute` dropped, a relative name was resolved against the process's
  // working directory, and a process working below the root as handed had `x` taken for `cwd/x`.
  it("leaves a relative candidate to the root, whatever the process's working directory", () => {
    const handed = dirname(process.cwd());
    expect(throughHandedRoot(handed, box.root, "x")).toBe("x");
    expect(throughHandedRoot(handed, box.root, join(process.cwd(), "x"))).toBe(join(box.root, basename(process.cwd()), "x"));
  });
});

describe("a missing name is asked quietly, not thrown", () => {
  /**
   * The default lookups, each call recorded as it was asked. `quietAlsoHides: "ENOTDIR"` answers that
   * error too with `undefined` when asked quietly, as Node releases after 20 do (nodejs/node#56993).
   */
  function recording(quietAlsoHides?: "ENOTDIR"): { fsApi: Lookups; calls: string[] } {
    const calls: string[] = [];
    const shown = (path: string) => relative(box.root, path) || ".";
    const fsApi: Lookups = {
      lstat(path, options) {
        const quietly = options?.throwIfNoEntry === false;
        calls.push(`lstat${quietly ? " quietly" : ""} ${shown(path)}`);
        try {
          return lstatSync(path, options);
        } catch (error) {
          if (quietly && (error as NodeJS.ErrnoException).code === quietAlsoHides) return undefined;
          throw error;
        }
      },
      realpath: ((path: string, options?: { encoding: "buffer" }) => {
        calls.push(`realpath ${shown(path)}`);
        return realpathSync.native(path, options as { encoding: "buffer" });
      }) as Lookups["realpath"],
    };
    return { fsApi, calls };
  }

  it("costs a new file below a directory a quiet lstat of it and of its parent, and the parent's realpath: no error is thrown", async () => {
    const { fsApi, calls } = recording();
    await expect(workspacePath(box.root, "src/new.ts", true, fsApi)).resolves.toBe(join(box.root, "src/new.ts"));
    expect(calls).toEqual(["realpath .", "lstat quietly src/new.ts", "lstat quietly src", "realpath src"]);
  });

  it("asks aloud again below anything but a directory, where a quiet answer may have hidden ENOTDIR", async () => {
    await symlink("src", join(box.root, "lnk"));
    const { fsApi, calls } = recording();
    await expect(workspacePath(box.root, "lnk/new.ts", true, fsApi)).resolves.toBe(join(box.root, "lnk/new.ts"));
    expect(calls).toEqual(["realpath .", "lstat quietly lnk/new.ts", "lstat quietly lnk", "lstat lnk/new.ts", "realpath lnk"]);
  });

  it.each(["src/a.ts/x", "src/a.ts/x/y"])("propagates ENOTDIR below a file where a quiet lstat answers it as missing: %s", async (candidate) => {
    const { fsApi } = recording("ENOTDIR");
    await expect(workspacePath(box.root, candidate, true, fsApi)).rejects.toMatchObject({ code: "ENOTDIR" });
    await expect(nearestExistingAncestor(join(box.root, candidate), fsApi)).rejects.toMatchObject({ code: "ENOTDIR" });
  });
});

describe("workspaceBoundary: what it answers besides the path", () => {
  it("gives the pinned real root, and the nearest existing entry of a path to create", async () => {
    await mkdir(join(box.root, "a"));
    await writeFile(join(box.root, "a", "f.txt"), "x");
    await symlink(box.root, join(box.root, "alias"));
    const boundary = workspaceBoundary(join(box.root, "alias"));
    expect(boundary.root).toBe(box.root);
    await expect(boundary.creating?.("a/new/deeper.txt")).resolves.toEqual({ path: join(box.root, "a/new/deeper.txt"), existing: join(box.root, "a"), leaf: undefined });
    const existing = await boundary.creating?.("a/f.txt");
    expect(existing).toMatchObject({ path: join(box.root, "a/f.txt"), existing: join(box.root, "a/f.txt") });
    // The check's own lstat of the leaf, which the write tool uses instead of asking again.
    expect(existing?.leaf?.isFile()).toBe(true);
    expect(existing?.leaf?.mode).toBe((await lstat(join(box.root, "a/f.txt"))).mode);
  });

  it("answers the leaf as lstat sees it: a symlink there is the link, not its target", async () => {
    await writeFile(join(box.root, "f.txt"), "x");
    await symlink("f.txt", join(box.root, "link"));
    const checked = await workspaceBoundary(box.root).creating?.("link");
    expect(checked?.leaf?.isSymbolicLink()).toBe(true);
  });
});

describe("the deepest resolvable ancestor decides a path that does not resolve", () => {
  beforeEach(async () => {
    await mkdir(join(box.root, "d1/d2/d3"), { recursive: true });
    await writeFile(join(box.root, "d1/file"), "x");
    await symlink(box.outside, join(box.root, "d1/d2/out"));
  });

  it.each([
    ["d1/d2/out/missing/x", "path escapes workspace"],
    ["d1/d2/out/secret.txt/x", "path escapes workspace"],
    ["d1/d2/d3/missing/x/y", "ENOENT: no such file or directory, realpath 'd1/d2/d3/missing/x/y'"],
    ["d1/file/x/y", "ENOTDIR: not a directory, realpath 'd1/file/x/y'"],
    ["missing", "ENOENT: no such file or directory, realpath 'missing'"],
  ])("%s: %s", async (candidate, message) => {
    await expect(workspacePath(box.root, candidate, false)).rejects.toThrow(message);
  });

  it("finds it by bisection: a path 4 096 steps deep costs a dozen realpath calls, not thousands", async () => {
    const calls: string[] = [];
    const fsApi = {
      lstat,
      realpath: ((path: string, options?: unknown) => {
        calls.push(path);
        return realpath(path, options as undefined);
      }) as FsApi["realpath"],
    };
    await expect(workspaceBoundary(box.root, fsApi)(`d1/d2/out/${"m/".repeat(4_095)}x`, false)).rejects.toThrow("path escapes workspace");
    expect(calls.length).toBeLessThanOrEqual(14);
  });
});

describe("real paths compared as bytes", () => {
  it("asks a real path holding U+FFFD again as bytes, and only such a path", async () => {
    await mkdir(join(box.root, "caf\uFFFD"));
    await writeFile(join(box.root, "caf\uFFFD", "a.txt"), "x");
    await writeFile(join(box.root, "plain.txt"), "x");
    const calls: string[] = [];
    const fsApi = {
      lstat,
      realpath: ((path: string, options?: { encoding?: string }) => {
        calls.push(`${options?.encoding ?? "utf8"} ${path}`);
        return realpath(path, options as undefined);
      }) as FsApi["realpath"],
    };
    const boundary = workspaceBoundary(box.root, fsApi);
    await expect(boundary("caf\uFFFD/a.txt", false)).resolves.toBe(join(box.root, "caf\uFFFD", "a.txt"));
    await expect(boundary("plain.txt", false)).resolves.toBe(join(box.root, "plain.txt"));
    expect(calls).toEqual([`utf8 ${join(box.root, "caf\uFFFD", "a.txt")}`, `buffer ${join(box.root, "caf\uFFFD", "a.txt")}`, `utf8 ${join(box.root, "plain.txt")}`]);
  });

  it("takes the string an injected fsApi answers even when bytes were asked for", async () => {
    await mkdir(join(box.root, "caf\uFFFD"));
    const fsApi = { lstat, realpath: ((path: string) => realpath(path)) as FsApi["realpath"] };
    await expect(workspaceBoundary(box.root, fsApi)("caf\uFFFD", false)).resolves.toBe(join(box.root, "caf\uFFFD"));
  });
});

describe("inWorkspaceTerms", () => {
  const root = "/srv/ws";
  const fsError = (message: string, fields: object) => Object.assign(new Error(message), { errno: -2, code: "ENOENT", syscall: "rename", ...fields });

  it("names the path and the destination relative to the root, the root itself as '.', and keeps the rest", () => {
    const error = fsError("ENOENT: no such file or directory, rename '/srv/ws/a/b' -> '/srv/ws'", { path: "/srv/ws/a/b", dest: "/srv/ws" });
    const shown = inWorkspaceTerms(error, root) as NodeJS.ErrnoException & { dest: string };
    expect(shown.message).toBe("ENOENT: no such file or directory, rename 'a/b' -> '.'");
    expect({ path: shown.path, dest: shown.dest, code: shown.code, errno: shown.errno, syscall: shown.syscall }).toEqual({
      path: "a/b",
      dest: ".",
      code: "ENOENT",
      errno: -2,
      syscall: "rename",
    });
  });

  it("rewrites a message with a path and no destination", () => {
    const shown = inWorkspaceTerms(fsError("ENOENT: no such file or directory, open '/srv/ws/x'", { path: "/srv/ws/x" }), root) as NodeJS.ErrnoException;
    expect([shown.message, shown.path, "dest" in shown]).toEqual(["ENOENT: no such file or directory, open 'x'", "x", false]);
  });

  it.each([
    ["an error already in workspace terms", fsError("ENOENT: no such file or directory, open 'x'", { path: "x" })],
    ["an error without a path", new Error("path escapes workspace")],
    ["a thrown string", "not an error"],
    ["nothing", undefined],
  ])("leaves %s as it is", (_label, error) => {
    expect(inWorkspaceTerms(error, root)).toBe(error);
  });
});
