/**
 * The installed package's toctou races: `workspace-gates toctou --mode race` from the packed tarball,
 * in a project that installed it. A race counts escapes in a time budget, and on a loaded machine its
 * control found none ("race ineffective"), so vitest.installed.config.ts runs this file alone, after
 * every other check has ended (its own project, a later `sequence.groupOrder`); the other checks
 * judge by runs, not by time, and share the machine.
 *
 * Every command runs with a private TMPDIR that must be empty afterwards: no race leaves a sandbox.
 */
import { readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useInstalledPackage } from "../support/installed.js";

const project = useInstalledPackage(async () => {
  await writeFile(join(project.consumer, "verified.mjs"), 'export { createVerifiedWorkspaceTools as createWorkspaceTools } from "workspace-gates";\n');
});
const { gates } = project;

describe("the installed workspace-gates toctou, racing", () => {
  it("races the chapter's tools with its worker-thread racer and finds them escaping (exit 1)", async () => {
    const json = join(project.consumer, "race.json");
    const { code, stdout, stderr } = await gates("toctou", "--mode", "race", "--seconds", "2", "--json", json);
    expect(code, stderr).toBe(1);
    const report = JSON.parse(await readFile(json, "utf8")) as { total: { escapes: number }; racer: { swaps: number; failure: string | null } };
    expect(report.racer).toMatchObject({ failure: null });
    expect(report.racer.swaps).toBeGreaterThan(0);
    expect(report.total.escapes).toBeGreaterThan(0);
    expect(stdout).toContain(`content escapes: ${report.total.escapes} of `);
  });

  it("races a user's module of the verified tools clean beside a control that escaped (exit 0), stating the bound", async () => {
    const { code, stdout, stderr } = await gates("toctou", "--mode", "race", "--seconds", "2", "--target", "verified.mjs");
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/rule of three: 0 escapes in \d+ calls puts the per-call escape rate below/);
  });

  it("leaves no sandbox in TMPDIR", async () => {
    expect(await readdir(project.privateTmp)).toEqual([]);
  });
});
