/**
 * `workspace-gates lesson`: exercises a student edits, from the installed package.
 *
 * Promises, beyond those of every CliCommand: with no argument, lists the lessons (exit 0).
 * `lesson NAME DIR` writes DIR/NAME.mjs (making DIR if needed), a plain ESM fork that imports only
 * node and the package's public entry point, and prints the command that grades it; it never
 * overwrites: a fork already there is left alone (exit 2), so a student's work is not lost. When
 * `workspace-gates` does not resolve from DIR, it says so and how to make it resolve.
 * `lesson NAME DIR --check` runs each of the lesson's checks on DIR/NAME.mjs in turn, with their
 * full output, and ends with one line: exit 0 when every check passed, 1 when one found a problem,
 * otherwise 2 when one could not run (the fork missing, or failing to load).
 * Does not promise: that a fork which passes is right beyond the seeds and budgets the checks ran.
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { auditCommand } from "../audit/command/command.js";
import { type CliCommand, type CliIo, UsageError, closest, invocationOf, parseCommandArgs } from "../cli-command.js";
import { shellWord } from "../shell-word.js";
import { toctouCommand } from "../toctou/command.js";
import { type Lesson, LESSONS } from "./catalogue.js";

const USAGE = `Usage: workspace-gates lesson [NAME DIR [--check]]

Exercises from the installed package: each lesson writes one plain JavaScript file, a fork of the
chapter's tools with a mistake that shipped in a real product, for you to fix.

  (no argument)        list the lessons
  NAME DIR             write the fork DIR/NAME.mjs (DIR is made if needed; nothing is overwritten)
                       and print the command that checks it
  NAME DIR --check     grade DIR/NAME.mjs: run the audit (and, for toctou, the TOCTOU demonstration)
                       on every property the lesson's seam can break
  -h, --help           show this help

The fork imports the package's public API (\`from "workspace-gates"\`), so DIR must lie inside a
project that installed workspace-gates (in a clone of its repository: after \`npm run build\`).

Exit status: 0 listed, written or passed; 1 the check found a problem; 2 could not run (unknown
lesson, a fork already there, a fork missing or failing to load).
`;

export const lessonCommand: CliCommand = {
  name: "lesson",
  summary: "exercises: write a fork with a shipped mistake for you to fix, and grade your fix",
  synopsis: "workspace-gates lesson [NAME DIR [--check]]",
  usage: USAGE,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs({ args: [...argv], options: { check: { type: "boolean" } }, allowPositionals: true });
    if (positionals.length === 0) {
      if (values.check === true) throw new UsageError("--check needs a lesson and its folder: lesson NAME DIR --check");
      io.stdout(listing());
      return 0;
    }
    const [name = "", dir, ...extra] = positionals;
    const lesson = LESSONS.find((candidate) => candidate.name === name);
    if (lesson === undefined) {
      const near = closest(name, LESSONS.map((candidate) => candidate.name));
      throw new UsageError(`no lesson named "${name}"${near === undefined ? "" : ` (did you mean ${near}?)`}; the lessons: ${LESSONS.map((candidate) => candidate.name).join(", ")}`);
    }
    if (dir === undefined) throw new UsageError(`lesson ${name} needs a folder to write its fork in: lesson ${name} DIR`);
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    const fork = join(dir, `${lesson.name}.mjs`);
    return values.check === true ? grade(lesson, fork, io) : write(lesson, dir, fork, io);
  },
};

function listing(): string {
  const width = Math.max(...LESSONS.map((lesson) => lesson.name.length));
  return `${LESSONS.map((lesson) => `  ${lesson.name.padEnd(width)}  ${lesson.title}`).join("\n")}\n\nworkspace-gates lesson NAME DIR writes a lesson's fork into DIR.\n`;
}

/** The command that grades `fork`, as the user started this one. */
function checkCommand(lesson: Lesson, dir: string, io: CliIo): string {
  return `${invocationOf(io, "lesson")} ${lesson.name} ${shellWord(dir)} --check`;
}

async function write(lesson: Lesson, dir: string, fork: string, io: CliIo): Promise<number> {
  if (existsSync(fork)) {
    io.stderr(`lesson: ${fork} already exists; it is left as it is (delete it to start again, or choose another folder)\n`);
    return 2;
  }
  await mkdir(dir, { recursive: true });
  const check = checkCommand(lesson, dir, io);
  await writeFile(fork, lesson.source(check), { flag: "wx" });
  io.stdout(`wrote ${fork}: lesson ${lesson.name}, ${lesson.title}.\nOpen it, find THE SEAM, fix it, then check your fix:\n  ${check}\n`);
  const unresolved = packageUnresolvedFrom(dir);
  if (unresolved !== undefined) io.stderr(`lesson: note: ${unresolved}\n`);
  return 0;
}

/** Why `import … from "workspace-gates"` would fail in a module in `dir`, or undefined when it resolves. */
export function packageUnresolvedFrom(dir: string): string | undefined {
  try {
    createRequire(join(resolve(dir), "package.json")).resolve("workspace-gates");
    return undefined;
  } catch {
    return `the fork imports "workspace-gates", which does not resolve from ${dir}: put the folder inside a project that installed the package (npm install --save-dev workspace-gates), or in a clone of its repository run npm run build`;
  }
}

async function grade(lesson: Lesson, fork: string, io: CliIo): Promise<number> {
  if (!existsSync(fork)) {
    io.stderr(`lesson: ${fork} does not exist; write it first: ${invocationOf(io, "lesson")} ${lesson.name} DIR\n`);
    return 2;
  }
  const commands = { audit: auditCommand, toctou: toctouCommand };
  const verdicts: { shows: string; code: number }[] = [];
  for (const step of lesson.checks) {
    const args = step.args.map((arg) => (arg === "{fork}" ? fork : arg));
    io.stdout(`\n== check ${verdicts.length + 1} of ${lesson.checks.length}: ${step.shows}\n   ${invocationOf(io, step.command)} ${args.map(shellWord).join(" ")}\n\n`);
    const code = await commands[step.command].run(args, io);
    // Ctrl-C or SIGTERM stopped the check: that is no grade, and the exit says so (128 + the signal).
    if (code >= 128) return code;
    verdicts.push({ shows: step.shows, code });
  }
  const failed = verdicts.filter(({ code }) => code !== 0);
  if (failed.length === 0) {
    io.stdout(`\nlesson ${lesson.name}: passed: ${verdicts.map(({ shows }) => shows).join("; ")}\n`);
    return 0;
  }
  // A problem found outranks a step that could not run (tools that never check leave the TOCTOU demonstration nothing to strike at).
  const couldNotRun = failed.every(({ code }) => code === 2);
  io.stdout(`\nlesson ${lesson.name}: ${couldNotRun ? "could not be checked" : "not yet"}: ${failed.map(({ shows, code }) => `${shows} ${code === 2 ? "could not run" : "failed"}`).join("; ")} (see above)\n`);
  return couldNotRun ? 2 : 1;
}
