// The race's machinery that `toctou --mode race` runs: the racer that swaps a directory for a link
// out and back while the tools run, and the fs trap that springs a swap between check and use.
import * as fsPromises from "node:fs/promises";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { Sandbox } from "../src/kit/sandbox/sandbox.js";
import { DECOY, prepareArena } from "../src/kit/toctou/arena.js";
import { startRacer } from "../src/kit/toctou/racer.js";
import { withMkdirTrap, withRealpathTrap } from "../src/kit/toctou/fs-trap.js";
import { until, useDemoSandbox } from "./support/toctou-demo.js";

describe("the racer", () => {
  const sandbox = useDemoSandbox();
  let box: Sandbox;
  beforeEach(() => {
    box = sandbox.current;
  });

  it("flips until stopped and has exited once stop() resolves", async () => {
    const racer = await startRacer([await prepareArena(box, "race")]);
    try {
      await until(() => racer.swaps() > 0, 10_000);
    } finally {
      const stats = await racer.stop();
      expect(stats.swaps).toBeGreaterThan(0);
      expect(stats.failure).toBeNull();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(racer.swaps(), "a stopped racer must not flip any more").toBe(stats.swaps);
      expect(await racer.stop(), "stop() again answers the same stats").toBe(stats);
    }
  });

  it("keeps flipping a file to a link after a target replaced the link by a file of its own (write by temp file and rename)", async () => {
    const arena = await prepareArena(box, "leaf/kept.txt", { occupant: "file", linkTo: join(box.outside, "dir", "secret.txt") });
    const racer = await startRacer([arena]);
    try {
      await until(() => racer.swaps() > 0, 10_000);
      // What a writer that renames a temporary file over the name does to whatever stands there.
      for (let replaced = 0; replaced < 50; replaced += 1) {
        const temporary = join(box.root, "leaf", `.tmp-${replaced}`);
        await fsPromises.writeFile(temporary, "the target's own file\n");
        await fsPromises.rename(temporary, arena.contested);
      }
      const seenAfter = racer.swaps();
      await until(() => racer.swaps() > seenAfter + 10, 10_000);
      // Looked for until a deadline, not a number of times: a racer thread starved of CPU on a loaded
      // machine may hold the file in place longer than a thousand lstat calls take (it did, at load 4).
      let isLink = false;
      for (const deadline = Date.now() + 10_000; !isLink && Date.now() < deadline; )
        isLink = (await fsPromises.lstat(arena.contested).catch(() => undefined))?.isSymbolicLink() === true;
      expect(isLink, "the racer must still put the link in place after the target replaced it").toBe(true);
    } finally {
      expect((await racer.stop()).failure).toBeNull();
    }
  });

  it("keeps flipping a file whose name a target removed (to write it anew), instead of failing", async () => {
    const arena = await prepareArena(box, "leaf/kept.txt", { occupant: "file", linkTo: join(box.outside, "dir", "secret.txt") });
    const racer = await startRacer([arena]);
    try {
      await until(() => racer.swaps() > 0, 10_000);
      for (let removed = 0; removed < 200; removed += 1) await fsPromises.rm(arena.contested, { force: true });
      const seenAfter = racer.swaps();
      await until(() => racer.swaps() > seenAfter + 10 || racer.failure() !== null, 10_000);
      expect(racer.failure()).toBeNull();
    } finally {
      expect((await racer.stop()).failure).toBeNull();
    }
  });

  it("gives a directory whose decoy a target moved or removed a fresh one while it is parked, so a move or a delete can win again", async () => {
    const arena = await prepareArena(box, "race");
    await fsPromises.rm(join(arena.contested, arena.decoyName));
    const racer = await startRacer([arena]);
    try {
      // Two flips: the directory has been parked, and is back at its name.
      await until(() => racer.swaps() >= 2, 10_000);
    } finally {
      expect((await racer.stop()).failure).toBeNull();
    }
    const directory = (await fsPromises.lstat(arena.contested)).isDirectory() ? arena.contested : arena.parkedOccupant;
    expect(await fsPromises.readFile(join(directory, arena.decoyName), "utf8")).toBe(DECOY);
  });

  it("refuses an arena whose name has no occupant to flip", async () => {
    const arena = await prepareArena(box, "free", { occupant: "none" });
    await expect(startRacer([arena])).rejects.toThrow(`${arena.contested} has no occupant`);
  });

  it("reports a failure instead of flipping when its arena is missing", async () => {
    const arena = await prepareArena(box, "race");
    await rm(arena.contested, { recursive: true });
    // The thread may die before or after it reports that it started; either way the failure is named.
    const racer = await startRacer([arena]).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
    if (racer instanceof Error) expect(racer.message).toMatch(/ENOENT/);
    else {
      await until(() => racer.failure() !== null, 10_000);
      const stats = await racer.stop();
      expect(stats.failure).toMatch(/ENOENT/);
      expect(stats.swaps).toBe(0);
    }
  });
});

describe("the fs trap", () => {
  it("puts the real realpath back when the body throws, and refuses to stack, on any function", async () => {
    const realRealpath = fsPromises.realpath;
    const realMkdir = fsPromises.mkdir;
    const never = { springsOn: () => false, move: async () => {} };
    await expect(
      withRealpathTrap(never, async () => {
        expect(fsPromises.realpath).not.toBe(realRealpath);
        expect(fsPromises.mkdir).toBe(realMkdir);
        await expect(withRealpathTrap(never, async () => "nested")).rejects.toThrow("already set");
        await expect(withMkdirTrap(never, async () => "nested")).rejects.toThrow("already set");
        throw new Error("body failed");
      }),
    ).rejects.toThrow("body failed");
    expect(fsPromises.realpath).toBe(realRealpath);
    expect(fsPromises.mkdir).toBe(realMkdir);
  });
});
