/**
 * `workspace-gates lesson` from the packed tarball, as a student meets it (issue 52): the fork is
 * written into the student's project, runs there with nothing but the installed package, and its
 * check fails the shipped mistake and the usual half-fix, and passes the chapter's fix; the TOCTOU
 * lesson passes with the verified tools. Run alone with
 * `npx vitest run --config vitest.installed.config.ts test/installed/lesson.check.ts`.
 */
import { readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CHAPTER_SEAMS } from "../../src/kit/lesson/fork-source.js";
import { useInstalledPackage } from "../support/installed.js";

const project = useInstalledPackage();

/** Writes lesson `name` into the folder `folder` of the project, edits it as the student would, and grades it. */
async function studentCheck(name: string, folder: string, edit: (source: string) => string) {
  const written = await project.gates("lesson", name, folder);
  expect(written.code, written.stderr).toBe(0);
  expect(written.stderr, "the package resolves from a folder of the project").toBe("");
  expect(written.stdout).toContain(`  npx workspace-gates lesson ${name} ${folder} --check\n`);
  const file = join(project.consumer, folder, `${name}.mjs`);
  const source = await readFile(file, "utf8");
  const edited = edit(source);
  await writeFile(file, edited);
  // The check exactly as printed, through the shell.
  return { ...(await project.inConsumer("sh", ["-c", `npx workspace-gates lesson ${name} ${folder} --check`])), edited: edited !== source };
}

const body = (seam: keyof typeof CHAPTER_SEAMS) => CHAPTER_SEAMS[seam].split("\n").slice(1, -1).join("\n");
const startsWith = "  return path.startsWith(root);";

describe("workspace-gates lesson, installed", () => {
  it("lists the lessons", async () => {
    const { code, stdout } = await project.gates("lesson");
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ {2}similar-prefix {2}/m);
    expect(stdout).toMatch(/^ {2}toctou +/m);
  });

  it("fails the similar-prefix fork as shipped and with the usual startsWith(root + \"/\") fix, and passes the chapter's fix", async () => {
    const shipped = await studentCheck("similar-prefix", "shipped", (source) => source);
    expect(shipped.code, shipped.stdout).toBe(1);
    const usual = await studentCheck("similar-prefix", "usual", (source) => source.replace(startsWith, '  return path === root || path.startsWith(root + "/");'));
    expect(usual.edited).toBe(true);
    expect(usual.code, usual.stdout).toBe(1);
    expect(usual.stdout).toMatch(/isInside\.posix\s+FAILED/);
    expect(usual.stdout).toMatch(/^lesson similar-prefix: not yet: /m);
    const fixed = await studentCheck("similar-prefix", "fixed", (source) => source.replace(startsWith, body("isInside")));
    expect(fixed.edited).toBe(true);
    expect(fixed.code, `${fixed.stdout}${fixed.stderr}`).toBe(0);
    expect(fixed.stdout).toMatch(/^lesson similar-prefix: passed: /m);
  });

  it("passes the toctou lesson with the verified tools, and leaves nothing in TMPDIR", async () => {
    const chapter = await studentCheck("toctou", "chapter", (source) => source);
    expect(chapter.code, chapter.stdout).toBe(1);
    const verified = await studentCheck("toctou", "verified", (source) => source.replace("createWorkspaceTools as chapterTools", "createVerifiedWorkspaceTools as chapterTools"));
    expect(verified.edited).toBe(true);
    expect(verified.code, `${verified.stdout}${verified.stderr}`).toBe(0);
    expect(verified.stdout).toMatch(/^lesson toctou: passed: /m);
    expect(await readdir(project.privateTmp)).toEqual([]);
  });
});
