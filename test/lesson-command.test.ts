// `workspace-gates lesson` (issue 52): a fork a student edits, written as one plain ESM file that
// imports only node and the package's public entry point, and a check that grades the fix on every
// property the lesson's seam can break, so the usual half-fix does not pass.
import { readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { CHECK_ANSWER_PROPERTIES, IS_INSIDE_PROPERTIES, LESSONS } from "../src/kit/lesson/catalogue.js";
import { CHAPTER_SEAMS } from "../src/kit/lesson/fork-source.js";
import { cli, useScratch } from "./support/cli.js";

const scratch = useScratch("workspace-gates-lesson-");

/** Every module specifier of an ESM source's static imports. */
const importsOf = (source: string) => [...source.matchAll(/^import [^;]*? from "([^"]+)";$/gm)].map(([, specifier]) => specifier);

/**
 * Writes lesson `name` into a fresh folder, applies `edit` as the student would, and points the import
 * of the package at its sources (what `workspace-gates` resolves to once installed is checked from the
 * packed tarball, test/installed/lesson.check.ts).
 */
async function studentFork(name: string, folder: string, edit: (source: string) => string = (source) => source): Promise<string> {
  const dir = join(scratch.path, folder);
  expect((await cli(["lesson", name, dir])).code).toBe(0);
  const file = join(dir, `${name}.mjs`);
  const written = await readFile(file, "utf8");
  const edited = edit(written);
  if (folder.endsWith("shipped")) expect(edited).toBe(written);
  else expect(edited, "the edit applies to the fork as written").not.toBe(written);
  await writeFile(file, edited.replace('from "workspace-gates"', `from ${JSON.stringify(resolve("src/index.ts"))}`));
  return dir;
}

const check = (name: string, dir: string) => cli(["lesson", name, dir, "--check"]);

/** The properties the kill matrix saw fail on any fork that replaces the seam whose forks `seamPattern` finds. */
async function brokenBySeam(seamPattern: RegExp): Promise<string[]> {
  const matrix = JSON.parse(await readFile("fixtures/kill-matrix.json", "utf8")) as { properties: string[]; rows: { module: string; failed: string[] }[] };
  const forks: string[] = [];
  for (const row of matrix.rows) {
    const source = await readFile(`fixtures/vulnerable/${row.module}.ts`, "utf8").catch(() => "");
    if (seamPattern.test(source)) forks.push(row.module);
  }
  expect(forks.length).toBeGreaterThan(1);
  return matrix.properties.filter((property) => matrix.rows.some((row) => forks.includes(row.module) && row.failed.includes(property)));
}

describe("workspace-gates lesson", () => {
  it("lists the lessons with no argument", async () => {
    const { code, stdout } = await cli(["lesson"]);
    expect(code).toBe(0);
    for (const lesson of LESSONS) expect(stdout).toMatch(new RegExp(`^  ${lesson.name}\\s+${lesson.title}$`, "m"));
  });

  it.each(LESSONS.map((lesson) => lesson.name))("writes %s as one plain ESM file importing node and the package's public entry point only, and prints its check", async (name) => {
    const dir = join(scratch.path, `plain-${name}`);
    const { code, stdout } = await cli(["lesson", name, dir]);
    expect(code).toBe(0);
    const source = await readFile(join(dir, `${name}.mjs`), "utf8");
    expect(importsOf(source).length).toBeGreaterThan(0);
    for (const specifier of importsOf(source)) expect(specifier).toMatch(/^(node:[a-z/]+|workspace-gates)$/);
    expect(source).not.toMatch(/\bimport\(/);
    expect(source).toContain("THE SEAM");
    const command = `npx workspace-gates lesson ${name} ${dir} --check`;
    expect(stdout).toContain(`  ${command}\n`);
    expect(source).toContain(command);
  });

  it("never overwrites a student's fork, and names an unknown lesson's nearest", async () => {
    const dir = join(scratch.path, "twice");
    await cli(["lesson", "similar-prefix", dir]);
    await writeFile(join(dir, "similar-prefix.mjs"), "// my work\n");
    const again = await cli(["lesson", "similar-prefix", dir]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("already exists; it is left as it is");
    expect(await readFile(join(dir, "similar-prefix.mjs"), "utf8")).toBe("// my work\n");
    const typo = await cli(["lesson", "similar-prefx", dir]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('no lesson named "similar-prefx" (did you mean similar-prefix?)');
    const missing = await cli(["lesson", "toctou", join(scratch.path, "never-written"), "--check"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("does not exist; write it first");
  });

  it("grades each path seam on every property the kill matrix saw a fork of that seam fail", async () => {
    expect([...IS_INSIDE_PROPERTIES]).toEqual(await brokenBySeam(/fork\(\{\s*isInside:/));
    expect([...CHECK_ANSWER_PROPERTIES]).toEqual(await brokenBySeam(/fork\(\{\s*check:/));
  });
});

describe("grading a fix", () => {
  const startsWith = "  return path.startsWith(root);";
  const rawJoin = "  return `${rootReal}/${candidate}`;";
  const body = (seam: keyof typeof CHAPTER_SEAMS) => CHAPTER_SEAMS[seam].split("\n").slice(1, -1).join("\n");

  it.each([
    ["similar-prefix", "shipped", 1, (source: string) => source, /isInside\.posix\s+FAILED/],
    // The usual fix: mends the sibling, still wrong at the root `/` and under win32 rules.
    ["similar-prefix", "usual-fix", 1, (source: string) => source.replace(startsWith, '  return path === root || path.startsWith(root + "/");'), /isInside\.posix\s+FAILED[^]*isInside\.win32\s+(?:FAILED|warning)/],
    ["similar-prefix", "fixed", 0, (source: string) => source.replace(startsWith, body("isInside")), /lesson similar-prefix: passed/],
    ["raw-candidate", "shipped", 1, (source: string) => source, /containment\.workspacePath\s+FAILED/],
    // join() normalizes `link/..` before the kernel sees it, but respells an absolute candidate below the root again.
    ["raw-candidate", "join-fix", 1, (source: string) => source.replace(rawJoin, "  return nodePath.join(rootReal, candidate);"), /precision\.workspacePath\s+FAILED/],
    ["raw-candidate", "fixed", 0, (source: string) => source.replace(rawJoin, body("pathToOpen")), /lesson raw-candidate: passed/],
    ["toctou", "shipped", 1, (source: string) => source, /content escapes: 2 of 2/],
    // Tools that refuse everything let nothing out, and are no tools.
    ["toctou", "refuse-all", 1, (source: string) => source.replace("  return chapterTools(root, options);", '  return chapterTools(root, options).map((tool) => ({ spec: tool.spec, execute: async () => ({ content: "no", isError: true }) }));'), /truncation\.read\s+FAILED/],
    ["toctou", "verified", 0, (source: string) => source.replace("createWorkspaceTools as chapterTools", "createVerifiedWorkspaceTools as chapterTools"), /lesson toctou: passed/],
  ] as const)("%s, %s: exit %i", async (name, folder, exit, edit, shows) => {
    const dir = await studentFork(name, `${name}-${folder}`, edit);
    const { code, stdout, stderr } = await check(name, dir);
    expect(code, `${stdout}${stderr}`).toBe(exit);
    expect(stdout).toMatch(shows);
    expect(stdout).toMatch(exit === 0 ? /passed: / : /not yet: /);
  }, 180_000);
});
