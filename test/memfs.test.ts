// memfs where it lies and where it tells the truth: the divergence table and the lesson of
// docs/memfs.md, held to a new replay, and the permission fault class it serves to the audit.
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { VULNERABLE_VARIANTS } from "../fixtures/vulnerable/catalog.js";
import { DEFAULT_RUNS } from "../src/kit/audit/command/budget.js";
import { faultsPermissions } from "../src/kit/audit/properties/permissions.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { loadTarget, referenceTarget } from "../src/kit/operations/target.js";
import { replayDivergences } from "../src/kit/memfs/divergence.js";
import { MEMFS_DOC, memfsVersion, renderMemfsDoc } from "../src/kit/memfs/doc.js";
import { type LessonRow, lessonTargets, runLesson } from "../src/kit/memfs/lesson.js";
import { type PlatformNeed, itNeeding } from "./support/platform.js";

const LINUX_ROOT: PlatformNeed = {
  missing: process.platform !== "linux" || process.getuid?.() !== 0,
  reason: "Linux as root: the table's disk column is what root sees (root bypasses modes on disk)",
};

const SEEDS = Array.from({ length: 20 }, (_, index) => index + 1);

describe("the lesson: forks judged on memfs and on the disk", () => {
  let lesson: LessonRow[] | undefined;
  const replayLesson = async () => (lesson ??= await runLesson(await lessonTargets(VULNERABLE_VARIANTS.map((variant) => variant.module))));
  const row = (target: string) => {
    const found = lesson?.find((candidate) => candidate.target === target);
    if (found === undefined) throw new Error(`no lesson row for ${target}`);
    return found;
  };

  itNeeding(LINUX_ROOT, "passes raw-candidate on memfs, which the disk kills; fails fail-open-errors on memfs, which the disk passes", async () => {
    await replayLesson();
    expect(row("reference")).toEqual({ target: "reference", memfs: [], disk: [] });
    expect(row("raw-candidate").memfs).toEqual([]);
    expect(row("raw-candidate").disk).toEqual([expect.stringContaining("`..` after a link")]);
    expect(row("fail-open-errors").memfs).toEqual([expect.stringContaining("a directory nobody may search")]);
    expect(row("fail-open-errors").disk).toEqual([]);
  });

  itNeeding(LINUX_ROOT, "docs/memfs.md is what a new replay renders (npm run memfs-doc)", async () => {
    expect(await readFile(MEMFS_DOC, "utf8")).toBe(renderMemfsDoc(await replayDivergences(), await replayLesson(), memfsVersion()));
  });
});

describe("faults.permissions: mode 000 and 0311 directories served through memfs", () => {
  it.each(SEEDS)("kills fail-open-errors at the default budget, seed %i", async (seed) => {
    const result = await runProperty(faultsPermissions, await loadTarget("fixtures/vulnerable/fail-open-errors.ts"), { seed, runs: DEFAULT_RUNS });
    expect(result.status).toBe("failed");
    expect(result.reason).toMatch(/^accepted .*, although ws\/\S+ cannot be searched \(EACCES\)$/);
  });

  it.each(SEEDS)("passes the reference, seed %i", async (seed) => {
    const result = await runProperty(faultsPermissions, await referenceTarget(), { seed, runs: DEFAULT_RUNS });
    expect(result, `${result.reason}\n${result.counterexample}`).toMatchObject({ status: "passed", runs: DEFAULT_RUNS });
  });
});
