// Trees as deep as the walk (issue 50): a recursive copy, delete, tree or search meets links out and
// special files below the top of what it walks, which the workspace's other links out (at its top)
// never put in its way. The opening lays them out in every tree and shrinking keeps only what a
// failure needs; the planted forks die at seed 1 (test/surface.test.ts, every seed: the sweeps).
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { DEEP_DIRECTORY, OPTION_VARIANTS, deepTree } from "../src/kit/audit/arbitraries/index.js";
import { disposeSandboxes } from "../src/kit/audit/runner/property.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { loadTarget } from "../src/kit/operations/target.js";
import { laidOut } from "../src/kit/sandbox/tree.js";
import { surfaceTools } from "../fixtures/surface/surface.js";
import { defaultRuns, property } from "./support/surface.js";
import { operationCases } from "../src/kit/audit/properties/operations.js";
import { operation } from "../src/kit/operations/catalog.js";

afterAll(() => disposeSandboxes());

describe("deepTree", () => {
  it("lays out a link out to a directory and to a file, a dangling link out and a FIFO two levels down, and aims at the directory once per variant", () => {
    const [attack] = fc.sample(deepTree([{ kind: "existing", end: "source" }, { kind: "fresh", end: "destination" }]), { numRuns: 1, seed: 1 });
    if (attack === undefined) throw new Error("no sample");
    const below = laidOut(attack.entries).filter((entry) => entry.at.length === 3);
    expect(below.map((entry) => `${entry.at.join("/")} ${entry.kind}`).sort()).toEqual(["deep/in/fifo special", "deep/in/gone symlink", "deep/in/kept.txt file", "deep/in/out symlink", "deep/in/secret symlink"]);
    expect(laidOut(attack.entries).filter((entry) => entry.kind === "symlink" && entry.at.length === 1)).toEqual([]);
    // The source only: a copy's new name is drawn, so the opening adds one call per variant, not two.
    expect(attack.aims).toHaveLength(OPTION_VARIANTS);
    expect(new Set(attack.aims.map((aim) => aim.variant)).size).toBe(OPTION_VARIANTS);
    expect(attack.aims.filter((aim) => aim.end === "source").every((aim) => aim.candidate.form === "text" && aim.candidate.text === DEEP_DIRECTORY)).toBe(true);
  });

  // The generic attack (`other`) was left without it while a FIFO wait over MCP was blamed on the
  // shapes twin's chmod (two names of one FIFO, released at once: test/openings.test.ts).
  it.each(["tree", "search", "grep", "copy", "move", "delete", "other"] as const)("is laid out in the trees of %s, which may walk what it is given", (id) => {
    const trees = fc.sample(operationCases(operation(id)), { numRuns: 30, seed: 1 }).map(({ tree }) => laidOut(tree).map((entry) => entry.at.join("/")));
    expect(trees.filter((names) => names.includes("deep/in/fifo")).length).toBeGreaterThan(0);
  });

  it("shrinks to the pieces a failure needs: a copy that follows links keeps the link to the secret and none of the rest", { timeout: 120_000 }, async () => {
    const result = await runProperty(property("containment.copy"), await loadTarget("fixtures/surface/copy-recursive-follows.ts"), { seed: 1, runs: defaultRuns("containment.copy") });
    expect(result.status).toBe("failed");
    expect(result.reason).toMatch(/a file inside the workspace now holds content from outside: \$BOX\/ws\/.*\/in\/secret$/);
    expect(result.counterexample).toMatch(/^ {2}ws\/deep\/in\/secret -> \$BOX\/outside\/secret\.txt$/m);
    for (const dropped of ["ws/deep/in/out", "ws/deep/in/gone", "ws/deep/in/fifo"]) expect(result.counterexample).not.toContain(dropped);
  });

  it("a recursive delete that follows a link to a directory inside removes what is outside", { timeout: 120_000 }, async () => {
    const result = await runProperty(property("containment.delete"), await loadTarget("fixtures/surface/delete-recursive-follows.ts"), { seed: 1, runs: defaultRuns("containment.delete") });
    expect(result.status).toBe("failed");
    expect(result.reason).toMatch(/removed \$BOX\/outside\//);
  });
});

describe("the secure surface's recursive copy", () => {
  // Seed 4 of containment.copy on the secure surface, once copy took recursive: `deep` copied to
  // `deep/in/…` walked the copy it was making, and the case never ended.
  it("refuses to copy a directory into itself", async () => {
    const root = await mkdtemp(join(tmpdir(), "workspace-gates-deep-copy-"));
    try {
      await mkdir(join(root, "deep", "in"), { recursive: true });
      const copy = surfaceTools(root).find((tool) => tool.spec.name === "copy");
      const answer = await copy?.execute({ source: "deep", destination: "deep/in/again", recursive: true });
      expect(answer).toMatchObject({ isError: true, content: expect.stringMatching(/not copied into itself/) });
      expect(await readdir(join(root, "deep", "in"))).toEqual([]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
