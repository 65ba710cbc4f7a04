// What the TOCTOU demo counts as a side effect outside the workspace: files, empty files,
// directories and changed canaries, apart from content escapes.
import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Sandbox, createSandbox } from "../src/kit/sandbox/sandbox.js";
import { NO_SIDE_EFFECTS, describeSideEffects, sideEffectsOf, sideEffectsSince } from "../src/kit/toctou/side-effects.js";

let box: Sandbox;
beforeEach(async () => {
  box = await createSandbox();
});
afterEach(async () => {
  await box.dispose();
});

describe("side effects outside the workspace", () => {
  it("are none while only the workspace and the attacker's scratch directory change", async () => {
    await mkdir(join(box.root, "made-inside"));
    await writeFile(join(box.scratch, "parked.txt"), "");
    expect(await sideEffectsOf(box)).toEqual(NO_SIDE_EFFECTS);
    expect(describeSideEffects(NO_SIDE_EFFECTS)).toBe("none");
  });

  it("sort every change outside by kind, an empty file apart from one with content", async () => {
    await writeFile(join(box.outside, "dir", "escaped.txt"), "leaked bytes");
    await writeFile(join(box.outside, "dir", "empty.txt"), "");
    await mkdir(join(box.outside, "made-outside"));
    await writeFile(join(box.outside, "secret.txt"), "overwritten canary");
    await rm(join(box.siblings[0] ?? "", "secret.txt"));
    await symlink("/", join(box.outside, "planted-link"));
    const effects = await sideEffectsOf(box);
    expect(effects).toMatchObject({ total: 6, directories: 1, emptyFiles: 1, filesWithContent: 1, other: 3 });
    expect(effects.examples).toHaveLength(5);
    expect(effects.examples).toContain("added outside/dir/empty.txt (file, 0 bytes)");
    expect(effects.examples).toContain("added outside/made-outside (directory)");
    expect(describeSideEffects(effects)).toBe("6 (1 file with content, 1 empty file, 1 directory, 3 other changes)");
  });

  it("since an earlier look, count only what is new", async () => {
    await mkdir(join(box.outside, "before"));
    const earlier = await box.outsideChanges();
    await writeFile(join(box.outside, "dir", "after.txt"), "");
    expect(await sideEffectsSince(box, earlier)).toEqual({
      ...NO_SIDE_EFFECTS,
      total: 1,
      emptyFiles: 1,
      examples: ["added outside/dir/after.txt (file, 0 bytes)"],
    });
  });
});
