// The verified tools without procfs: construction refuses with the reason, and bestEffort marks every
// result unverified.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type Sandbox, createSandbox } from "../src/kit/sandbox/sandbox.js";
import type { Tool } from "../src/gates/tool.js";
import { procfsProblem } from "../src/verified/procfs.js";
import { createVerifiedWorkspaceTools, unverifiedNotice } from "../src/verified/verified-tools.js";
import { createWorkspaceTools } from "../src/tools/workspace-tools.js";
import { LINUX_PROCFS, POSIX_SHELL, itNeeding } from "./support/platform.js";

// Platforms without procfs are simulated by replacing statfsSync/readlinkSync of node:fs for this file
// only: the production code has no switch that only tests would use.
const platform = vi.hoisted(() => ({
  statfs: undefined as (() => { type: number }) | undefined,
  readlink: undefined as ((path: string) => string) | undefined,
}));
vi.mock("node:fs", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs")>();
  return {
    ...actual,
    statfsSync: (path: string) => (platform.statfs === undefined ? actual.statfsSync(path) : platform.statfs()),
    readlinkSync: (path: string, options?: { encoding: BufferEncoding }) => (platform.readlink === undefined ? actual.readlinkSync(path, options) : platform.readlink(path)),
  };
});

const TMPFS_MAGIC = 0x01021994;
const noProc = () => {
  throw Object.assign(new Error("ENOENT: no such file or directory, statfs '/proc/self/fd'"), { code: "ENOENT" });
};

let box: Sandbox;
beforeEach(async () => {
  box = await createSandbox();
});
afterEach(async () => {
  platform.statfs = undefined;
  platform.readlink = undefined;
  expect(await box.canaryChanges()).toEqual([]);
  await box.dispose();
});

describe("procfsProblem", () => {
  itNeeding(LINUX_PROCFS, "finds nothing wrong on this Linux host", () => {
    expect(procfsProblem()).toBeUndefined();
  });

  it.each([
    ["no /proc at all (macOS, Windows)", noProc, undefined, "/proc/self/fd is not available (ENOENT)"],
    ["another filesystem mounted on /proc", () => ({ type: TMPFS_MAGIC }), undefined, "/proc/self/fd is not on procfs (filesystem type 0x1021994)"],
    [
      "magic links that do not report the opened object",
      undefined,
      () => "/somewhere/else",
      '/proc/self/fd does not report what was opened (/ reads back as "/somewhere/else")',
    ],
  ])("names %s", (_label, statfs, readlink, problem) => {
    platform.statfs = statfs;
    platform.readlink = readlink;
    expect(procfsProblem()).toBe(problem);
  });
});

describe("createVerifiedWorkspaceTools without procfs", () => {
  it("refuses to construct, and says how to opt into best effort", () => {
    platform.statfs = noProc;
    expect(() => createVerifiedWorkspaceTools(box.root)).toThrow(
      "verified workspace tools need Linux procfs: /proc/self/fd is not available (ENOENT). Pass { bestEffort: true } to use the chapter's checks instead, with every result marked unverified.",
    );
  });

  itNeeding(POSIX_SHELL, "with bestEffort, gives the chapter's tools and marks every result unverified, errors included", async () => {
    platform.statfs = noProc;
    const tools = createVerifiedWorkspaceTools(box.root, { bestEffort: true });
    expect(tools.map((tool) => tool.spec)).toEqual(createWorkspaceTools(box.root).map((tool) => tool.spec));
    const [read, write, bash] = tools as [Tool, Tool, Tool];
    const notice = unverifiedNotice("/proc/self/fd is not available (ENOENT)");
    // Written out once, so an empty or reworded notice cannot pass by being compared with itself.
    expect(notice).toBe(
      "[unverified: /proc/self/fd is not available (ENOENT); this result comes from the chapter's path checks alone, which a concurrent symlink swap or a hardlink can get past]",
    );
    await writeFile(join(box.root, "a.txt"), "hello");
    await expect(read.execute({ path: "a.txt" })).resolves.toEqual({ content: `hello\n${notice}` });
    await expect(write.execute({ path: "../outside/x.txt", content: "x" })).resolves.toEqual({
      content: `write: path escapes workspace\n${notice}`,
      isError: true,
    });
    await expect(read.execute({ path: 1 })).resolves.toEqual({ content: `invalid read input: path must be a string\n${notice}`, isError: true });
    await expect(bash.execute({ command: "echo hi" })).resolves.toEqual({ content: `hi\n\n${notice}` });
  });
});
