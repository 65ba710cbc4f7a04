// docs/arbitraries.md's example runs as written: the code block, with the package's specifiers pointed
// at this repository's sources, in a child process (it prints and may set the exit code).
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pathNear } from "../src/kit/arbitraries/index.js";
import { SIMILAR_PREFIX_SUFFIXES } from "../src/kit/sandbox/sandbox.js";
import { EXAMPLE_FINDING, arbitrariesExample } from "./support/doc-example.js";

const run = promisify(execFile);

describe("docs/arbitraries.md", () => {
  it("finds the startsWith(root) mistake against an mkdtemp root", async () => {
    const scratch = await mkdtemp(join(tmpdir(), "workspace-gates-arbitraries-doc-"));
    try {
      // The file lives outside this repository, so every package it names is given by path.
      const example = (await arbitrariesExample())
        .replace('"workspace-gates/arbitraries"', JSON.stringify(resolve("src/kit/arbitraries/index.ts")))
        .replace('"workspace-gates"', JSON.stringify(resolve("src/index.ts")))
        .replace('"fast-check"', JSON.stringify(createRequire(import.meta.url).resolve("fast-check")));
      const file = join(scratch, "similar-prefix.mjs");
      await writeFile(file, example);
      const { stdout } = await run(process.execPath, ["--import", "tsx", file], { cwd: process.cwd() });
      expect(stdout).toMatch(EXAMPLE_FINDING);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }, 120_000); // a child that starts tsx: slow on a loaded machine
});

describe("pathNear", () => {
  const root = "/tmp/ws-AbC123";
  it("starts every path at the root, a similar-prefix sibling or the parent, within maxSegments", () => {
    const starts = [root, ...SIMILAR_PREFIX_SUFFIXES.map((suffix) => `${root}${suffix}`), "/tmp"];
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5 }), fc.integer(), (maxSegments, seed) => {
        const [path] = fc.sample(pathNear({ root, maxSegments }), { numRuns: 1, seed });
        const start = starts.find((candidate) => path === candidate || path?.startsWith(`${candidate}/`));
        expect(start, path).toBeDefined();
        expect((path as string).slice((start as string).length).split("/").length - 1).toBeLessThanOrEqual(maxSegments);
      }),
    );
  });
});
