import { mkdir, rename, rm, symlink, writeFile } from "node:fs/promises";
import * as fsPromises from "node:fs/promises";
import { dirname, join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Sandbox, createSandbox } from "../src/audit/sandbox.js";
import type { Tool } from "../src/tool.js";
import { type FsApi, checkUnderRealRoot, realRootOnce, workspacePath } from "../src/workspace-path.js";
import { createWorkspaceTools } from "../src/workspace-tools.js";

let box: Sandbox;
beforeEach(async () => {
  box = await createSandbox();
});
afterEach(async () => {
  expect(await box.canaryChanges()).toEqual([]);
  await box.dispose();
});

/** An fsApi that records every call, to pin how many the tools' check makes. */
function countingFs(): FsApi & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    lstat: ((path: string) => {
      calls.push(`lstat ${path}`);
      return fsPromises.lstat(path);
    }) as FsApi["lstat"],
    realpath: ((path: string) => {
      calls.push(`realpath ${path}`);
      return fsPromises.realpath(path);
    }) as FsApi["realpath"],
  };
}

async function outcome(check: Promise<string>): Promise<{ path: string } | { error: string }> {
  try {
    return { path: await check };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

// A small tree under the root: top-level entries, then entries inside those that are directories.
// Link targets lead inside, outside, into a similar-prefix sibling, nowhere (dangling) and to
// themselves (a loop); "<root>" and "<outside>" stand for absolute paths filled in per sandbox.
const topNames = ["a", "b", "c"] as const;
const linkTarget = fc.constantFrom(
  "a",
  "b/y",
  "missing",
  "self",
  ".",
  "..",
  "../outside",
  "../outside/secret.txt",
  "../outside/missing/deeper",
  "../ws-other",
  "<root>/a",
  "<outside>/dir",
);
const entry = fc.oneof(
  fc.constant({ kind: "absent" as const }),
  fc.constant({ kind: "dir" as const }),
  fc.constant({ kind: "file" as const }),
  linkTarget.map((target) => ({ kind: "link" as const, target })),
);
type Entry = typeof entry extends fc.Arbitrary<infer T> ? T : never;
const tree = fc.record({ a: entry, b: entry, c: entry, "a/x": entry, "b/y": entry });
const candidate = fc.oneof(
  fc.array(fc.constantFrom("a", "b", "c", "x", "y", "..", ".", "missing", "..foo", "new"), { minLength: 1, maxLength: 4 }).map((parts) => parts.join("/")),
  fc.constantFrom("", "<root>/b/y", "<outside>/secret.txt", "<root>-other/secret.txt", "/"),
);

async function build(root: string, layout: Record<string, Entry>, fill: (text: string) => string): Promise<void> {
  for (const name of topNames) await rm(join(root, name), { recursive: true, force: true });
  for (const [path, spec] of Object.entries(layout)) {
    const parent = dirname(path);
    if (parent !== "." && layout[parent]?.kind !== "dir") continue;
    const full = join(root, path);
    if (spec.kind === "dir") await mkdir(full);
    if (spec.kind === "file") await writeFile(full, "x");
    if (spec.kind === "link") await symlink(spec.target === "self" ? full : fill(spec.target), full);
  }
}

describe("checkUnderRealRoot: gate 3 as the tools run it", () => {
  it("answers exactly what workspacePath answers (path or error) on generated trees with links", async () => {
    const fill = (text: string) => text.replace("<root>", box.root).replace("<outside>", box.outside);
    await fc.assert(
      fc.asyncProperty(tree, fc.array(fc.tuple(candidate, fc.boolean()), { minLength: 1, maxLength: 6 }), async (layout, cases) => {
        await build(box.root, layout, fill);
        for (const [raw, creating] of cases) {
          const path = fill(raw);
          const fast = outcome(checkUnderRealRoot(box.root, path, creating).then((checked) => checked.path));
          expect(await fast).toEqual(await outcome(workspacePath(box.root, path, creating)));
        }
      }),
      { numRuns: 60 },
    );
  });

  it("proves an existing path with one realpath and no lstat", async () => {
    await writeFile(join(box.root, "a.txt"), "x");
    const fs = countingFs();
    await expect(checkUnderRealRoot(box.root, "a.txt", true, fs)).resolves.toEqual({ path: join(box.root, "a.txt"), checked: join(box.root, "a.txt") });
    expect(fs.calls).toEqual([`realpath ${join(box.root, "a.txt")}`]);
  });

  it("names the nearest existing ancestor it checked for a new path, so write knows which directories are missing", async () => {
    await mkdir(join(box.root, "a"));
    await expect(checkUnderRealRoot(box.root, "a/b/c/new.txt", true)).resolves.toEqual({
      path: join(box.root, "a", "b", "c", "new.txt"),
      checked: join(box.root, "a"),
    });
  });

  it("refuses a dangling link whose target would be created outside, with the error workspacePath gives", async () => {
    await symlink(join(box.outside, "planted.txt"), join(box.root, "dangling"));
    const expected = await outcome(workspacePath(box.root, "dangling", true));
    expect(expected).toMatchObject({ error: expect.stringMatching(/^ENOENT/) });
    expect(await outcome(checkUnderRealRoot(box.root, "dangling", true).then((checked) => checked.path))).toEqual(expected);
  });
});

describe("realRootOnce: the root's real path, fixed when the tools are created", () => {
  it("resolves the root once for any number of calls", async () => {
    const fs = countingFs();
    const rootReal = realRootOnce(join(box.root, "."), fs);
    expect(await Promise.all([rootReal(), rootReal(), rootReal()])).toEqual([box.root, box.root, box.root]);
    expect(fs.calls).toEqual([`realpath ${box.root}`]);
  });

  it("resolves a root that did not exist when the tools were created once it does", async () => {
    const later = join(box.root, "later");
    const [read] = createWorkspaceTools(later) as [Tool, Tool, Tool];
    await expect(read.execute({ path: "a.txt" })).resolves.toMatchObject({ isError: true, content: expect.stringMatching(/^read: ENOENT/) });
    await mkdir(later);
    await writeFile(join(later, "a.txt"), "late");
    await expect(read.execute({ path: "a.txt" })).resolves.toEqual({ content: "late" });
  });

  it("keeps the boundary when the root directory is replaced by a symlink to outside, where workspacePath follows it", async () => {
    const [read, write, bash] = createWorkspaceTools(box.root, { bash: { timeoutMs: 2_000 } }) as [Tool, Tool, Tool];
    // Any call awaits the root's resolution, which started when the tools were created.
    await expect(read.execute({ path: "." })).resolves.toEqual({ content: "read: not a regular file", isError: true });
    // What a bash command can do, since the process may write the root's parent.
    await rename(box.root, `${box.root}.old`);
    await symlink(box.outside, box.root);
    try {
      await expect(read.execute({ path: "secret.txt" })).resolves.toEqual({ content: "read: path escapes workspace", isError: true });
      await expect(write.execute({ path: "planted.txt", content: "x" })).resolves.toEqual({ content: "write: path escapes workspace", isError: true });
      await expect(bash.execute({ command: "cat secret.txt" })).resolves.toEqual({ content: "bash: path escapes workspace", isError: true });
      // The chapter's per-call realpath moves the boundary to the link's target: documented divergence.
      await expect(workspacePath(box.root, "secret.txt", false)).resolves.toBe(join(box.outside, "secret.txt"));
    } finally {
      await rm(box.root);
      await rename(`${box.root}.old`, box.root);
    }
  });
});
