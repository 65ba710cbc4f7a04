// The course in docs/lessons/ runs as written: each page's fork fails the audit and its fix passes,
// through the page's own commands, and the code on each page is the fixture's.
import { readFile, readdir } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { VULNERABLE_VARIANTS } from "../fixtures/vulnerable/catalog.js";
import { main } from "../src/kit/cli.js";
import { readSectionFromFile, wrapSection } from "./support/generated-section.js";
import { INSTALLED_LESSON_COMMAND, LESSONS, codeBlock } from "./support/lessons.js";

/** `npm run audit -- ARGS   # exits N` lines of a page, in order. */
function auditCommands(page: string): { args: string[]; exits: number }[] {
  return [...page.matchAll(/^npm run audit -- (.+?)\s+# exits (\d)$/gm)].map(([, args = "", exits = ""]) => ({ args: args.split(/\s+/), exits: Number(exits) }));
}

async function audit(args: readonly string[]): Promise<{ code: number; output: string }> {
  let output = "";
  const code = await main(["audit", ...args], { stdout: (text) => (output += text), stderr: (text) => (output += text) });
  return { code, output };
}

describe.each(LESSONS)("lesson $page", (lesson) => {
  const caughtBy = VULNERABLE_VARIANTS.find((variant) => variant.module === lesson.variant)?.caughtBy ?? [];

  it("shows the fork and the fix exactly as the fixture files hold them", async () => {
    expect(await readSectionFromFile(lesson.sections.fork)).toBe(wrapSection(lesson.sections.fork, codeBlock(await readFile(lesson.fork, "utf8"))));
    expect(await readSectionFromFile(lesson.sections.fixed)).toBe(wrapSection(lesson.sections.fixed, codeBlock(await readFile(lesson.fixed, "utf8"))));
  });

  it("fails the fork and passes the fix with its own commands, on the properties the catalogue names", async () => {
    const commands = auditCommands(await readFile(lesson.page, "utf8"));
    expect(commands.map(({ args, exits }) => [args[0], exits])).toEqual([
      [lesson.fork, 1],
      [lesson.fixed, 0],
    ]);
    for (const { args, exits } of commands) {
      expect(args.slice(1)).toEqual(["--only", caughtBy.join(","), "--seed", "1", "--time", "10"]);
      const { code, output } = await audit(args);
      expect(code, output).toBe(exits);
      for (const id of caughtBy) expect(output).toMatch(new RegExp(`${id.replace(".", "\\.")}\\s+${exits === 1 ? "FAILED" : "passed"}`));
    }
  }, 120_000);
});

it("gives every command for an installed project too: the same flags, the fork compiled under dist/fixtures (run by npm run test:installed)", async () => {
  for (const lesson of LESSONS) {
    const page = await readFile(lesson.page, "utf8");
    const installed = [...page.matchAll(INSTALLED_LESSON_COMMAND)].map(([, args = "", exits = ""]) => ({ args: args.split(/\s+/), exits: Number(exits) }));
    const compiled = (path: string) => `node_modules/workspace-gates/dist/${path.replace(/\.ts$/, ".js")}`;
    expect(installed).toEqual(auditCommands(page).map(({ args: [module = "", ...flags], exits }) => ({ args: [compiled(module), ...flags], exits })));
  }
});

it("has a lesson for every fixed module in fixtures/lessons/, and a fork from the kill matrix for each", async () => {
  expect((await readdir("fixtures/lessons")).sort()).toEqual(LESSONS.map((lesson) => `${lesson.variant}.ts`).sort());
  for (const lesson of LESSONS) expect(VULNERABLE_VARIANTS.map((variant) => variant.module)).toContain(lesson.variant);
});
