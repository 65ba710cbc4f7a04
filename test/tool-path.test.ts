// workspaceBoundary, gate 3 as the tools run it: the same answer as workspacePath while the root
// stays put, and a boundary that does not move when the root is replaced by a symlink.
import { mkdir, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import * as fsPromises from "node:fs/promises";
import { dirname, join } from "node:path";
import fc from "fast-check";
import { beforeEach, describe, expect, it } from "vitest";
import { SECRET, type Sandbox } from "../src/kit/sandbox/sandbox.js";
import type { Tool } from "../src/gates/tool.js";
import { type FsApi, workspaceBoundary, workspacePath } from "../src/gates/workspace-path.js";
import { createWorkspaceTools } from "../src/tools/workspace-tools.js";
import { useSandbox } from "./support/sandbox.js";
import { describeEachToolSet } from "./support/tool-sets.js";

let box: Sandbox;
const sandbox = useSandbox();
beforeEach(() => {
  box = sandbox.current;
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

describe("workspaceBoundary: gate 3 as the tools run it", () => {
  it("answers exactly what workspacePath answers (path or error) on generated trees with links", async () => {
    const fill = (text: string) => text.replace("<root>", box.root).replace("<outside>", box.outside);
    const boundary = workspaceBoundary(box.root);
    await fc.assert(
      fc.asyncProperty(tree, fc.array(fc.tuple(candidate, fc.boolean()), { minLength: 1, maxLength: 6 }), async (layout, cases) => {
        await build(box.root, layout, fill);
        for (const [raw, creating] of cases) {
          const path = fill(raw);
          expect(await outcome(boundary(path, creating))).toEqual(await outcome(workspacePath(box.root, path, creating)));
        }
      }),
      { numRuns: 60 },
    );
  });

  it("answers an absolute request through the spelling the root was handed over as exactly as its relative remainder", async () => {
    // Tools built on /tmp/ws whose real path is /private/tmp/ws (macOS), or on /home/u/ws with /home a link.
    const handed = join(box.scratch, "handed");
    await symlink(box.root, handed);
    const fill = (text: string) => text.replace("<root>", box.root).replace("<outside>", box.outside);
    const boundary = workspaceBoundary(handed);
    await fc.assert(
      fc.asyncProperty(tree, fc.array(fc.tuple(candidate, fc.boolean()), { minLength: 1, maxLength: 6 }), async (layout, cases) => {
        await build(box.root, layout, fill);
        for (const [raw, creating] of cases.filter(([raw]) => !raw.startsWith("<") && !raw.startsWith("/"))) {
          const relative = await outcome(boundary(raw, creating));
          expect(await outcome(boundary(`${handed}/${raw}`, creating)), raw).toEqual(relative);
          expect(await outcome(workspacePath(handed, `${handed}/${raw}`, creating)), raw).toEqual(relative);
        }
      }),
      { numRuns: 60 },
    );
  });

  it("makes the chapter's calls, except that the root was resolved when the boundary was made", async () => {
    await writeFile(join(box.root, "a.txt"), "x");
    const fs = countingFs();
    const boundary = workspaceBoundary(join(box.root, "."), fs);
    await expect(boundary("a.txt", false)).resolves.toBe(join(box.root, "a.txt"));
    await expect(boundary("new.txt", true)).resolves.toBe(join(box.root, "new.txt"));
    expect(fs.calls).toEqual([
      `realpath ${join(box.root, "a.txt")}`,
      `lstat ${join(box.root, "new.txt")}`,
      `lstat ${box.root}`,
      `realpath ${box.root}`,
    ]);
  });

  it("keeps the boundary when the root directory is replaced by a symlink to outside, where workspacePath follows it", async () => {
    const [read, write, bash] = createWorkspaceTools(box.root, { bash: { timeoutMs: 2_000 } }) as [Tool, Tool, Tool];
    // Creation pinned the root's real path; what a bash command can do, since the process may write the root's parent.
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

describeEachToolSet("an absolute request that spells the root as the caller handed it over", (toolSet) => {
  let handed: string;
  beforeEach(async () => {
    handed = join(box.scratch, "handed");
    await symlink(box.root, handed);
  });
  const toolsOn = (root: string) => toolSet.create(root, { bash: { timeoutMs: 2_000 } }) as [Tool, Tool, Tool];

  it("is read and written below the real root, however deep", async () => {
    const [read, write] = toolsOn(handed);
    await expect(write.execute({ path: `${handed}/new/deep/x.txt`, content: "in" })).resolves.toEqual({ content: `wrote 2 bytes to ${handed}/new/deep/x.txt` });
    await expect(readFile(join(box.root, "new/deep/x.txt"), "utf8")).resolves.toBe("in");
    await expect(read.execute({ path: `${handed}/new/deep/x.txt` })).resolves.toEqual({ content: "in" });
  });

  it("is refused when it climbs out of that spelling", async () => {
    const [read, write] = toolsOn(handed);
    await expect(read.execute({ path: `${handed}/../outside/secret.txt` })).resolves.toEqual({ content: "read: path escapes workspace", isError: true });
    await expect(write.execute({ path: `${handed}/../handed-x`, content: "x" })).resolves.toEqual({ content: "write: path escapes workspace", isError: true });
  });

  it("keeps meaning the root the tools pinned after that spelling is repointed to outside: the alias is not followed again", async () => {
    const [read, write] = toolsOn(handed);
    await rm(handed);
    await symlink(box.outside, handed);
    await expect(read.execute({ path: `${handed}/secret.txt` })).resolves.not.toEqual({ content: SECRET });
    await expect(write.execute({ path: `${handed}/planted.txt`, content: "x" })).resolves.toEqual({ content: `wrote 1 bytes to ${handed}/planted.txt` });
    await expect(readFile(join(box.root, "planted.txt"), "utf8")).resolves.toBe("x");
  });

  it("is refused through any other symlinked spelling of the root (judged by name, docs/limits.md)", async () => {
    const other = join(box.scratch, "other");
    await symlink(box.root, other);
    await writeFile(join(box.root, "a.txt"), "inside");
    const [read] = toolsOn(handed);
    await expect(read.execute({ path: `${other}/a.txt` })).resolves.toEqual({ content: "read: path escapes workspace", isError: true });
    await expect(read.execute({ path: `${box.root}/a.txt` })).resolves.toEqual({ content: "inside" });
  });
});
