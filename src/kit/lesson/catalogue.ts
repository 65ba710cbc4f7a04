/**
 * The lessons `workspace-gates lesson` teaches: each a mistake that shipped, the fork that makes it
 * (fork-source.ts), and the checks that grade a student's fix.
 *
 * Promise: a lesson's checks cover every property its seam can break, not only the one its mistake
 * breaks first: for a path-check seam, every property the kill matrix (fixtures/kill-matrix.json) saw
 * fail on any catalogued fork of that seam (test/lesson-command.test.ts holds the lists to it), so a
 * fix that mends the example and breaks the rule another way (`path.startsWith(root + "/")`, which
 * fails `isInside.posix` on `/ws/..`, and departs on `isInside.win32` at the checks' budget) does not pass.
 * Does not promise: that a fix which passes is right for seeds, budgets or platforms the check did not run.
 */
import { type SeamName, pathForkSource, toolsForkSource } from "./fork-source.js";
import { DEFAULT_RUNS } from "../audit/command/budget.js";

/** One step of grading: a command of this CLI run on the student's fork (`{fork}` stands for its path). */
export interface CheckStep {
  command: "audit" | "toctou";
  args: readonly string[];
  /** What the step shows, in a few words. */
  shows: string;
}

export interface Lesson {
  name: string;
  title: string;
  /** The mistake and where it shipped, a few lines. */
  mistake: string;
  /** What to change, without giving the answer. */
  task: string;
  /** The fork's source, given the check command to print in its header. */
  source(checkCommand: string): string;
  checks: readonly CheckStep[];
}

/** Every property a mistake in `isInside` broke in the kill matrix (similar-prefix, case-insensitive, missing-is-absolute, posix-separator, quote-trimmed, starts-with-dotdot). */
export const IS_INSIDE_PROPERTIES = ["isInside.posix", "isInside.win32", "containment.workspacePath", "containment.read", "containment.write", "precision.workspacePath", "faults.tools", "corpus.mcp"] as const;

/** Every property a mistake in what the check answers broke in the kill matrix (raw-candidate, decoded-after-check, nul-after-check, swallowed-denial). */
export const CHECK_ANSWER_PROPERTIES = [
  "fields.nulBytes",
  "containment.workspacePath",
  "containment.read",
  "containment.write",
  "precision.workspacePath",
  "faults.workspacePath",
  "faults.tools",
  "faults.permissions",
  "corpus.go",
  "corpus.mcp",
  "sequences.rootSwap",
  "sequences.swapInCall",
] as const;

/** What the tools must still do when they are replaced whole: answer inputs, stay inside, survive faults and bash's moves. */
export const TOOL_PROPERTIES = ["fields.tools", "containment.read", "containment.write", "faults.tools", "sequences.bash", "sequences.rootSwap", "truncation.read"] as const;

// Exactly the runs every verdict needs (the time budget's floor, which the kill matrix holds each
// fork to dying within), at one seed: the same grade on every machine and under any load, without the
// further blocks a time budget runs while time is left.
const AUDIT_BUDGET = ["--seed", "1", "--runs", String(DEFAULT_RUNS)] as const;

function auditStep(properties: readonly string[]): CheckStep {
  return { command: "audit", args: ["{fork}", "--only", properties.join(","), ...AUDIT_BUDGET], shows: `every property the seam can break (${properties.length})` };
}

function pathLesson(name: string, title: string, mistake: string, task: string, seam: SeamName, broken: string, properties: readonly string[]): Lesson {
  return {
    name,
    title,
    mistake,
    task,
    source: (checkCommand) => pathForkSource({ header: header(name, title, mistake, task, checkCommand), seam, broken }),
    checks: [auditStep(properties)],
  };
}

function header(name: string, title: string, mistake: string, task: string, checkCommand: string): string {
  return `Lesson ${name}: ${title}.\n\n${mistake}\n\nYour task: ${task}\n\nCheck your fix (it passes when every property the seam can break holds):\n  ${checkCommand}`;
}

export const LESSONS: readonly Lesson[] = [
  pathLesson(
    "similar-prefix",
    "the similar prefix",
    "The containment test asks whether the real path starts with the root's, so the sibling `/work-other`\npasses as inside `/work`. Shipped in Claude Code (CVE-2025-54794), the MCP filesystem server\n(CVE-2025-53110) and tar-fs (CVE-2025-59343).",
    "rewrite `isInside` so that it compares whole components, under posix and win32 rules alike\n(the audit calls it with `path.win32` too).",
    "isInside",
    `export function isInside(root, path, pathApi = nodePath) {
  return path.startsWith(root);
}`,
    IS_INSIDE_PROPERTIES,
  ),
  pathLesson(
    "raw-candidate",
    "check one string, open another",
    "The check resolves the candidate and checks that, but the tools open the root joined with the raw\ncandidate, which the kernel resolves step by step: after a symlink, `..` climbs from the link's\ntarget. Shipped in Codex CLI's safety.rs and the MCP server's normalizePath.",
    "make `pathToOpen` answer a path that is exactly what was checked.",
    "pathToOpen",
    `function pathToOpen(rootReal, candidate, checked) {
  return \`\${rootReal}/\${candidate}\`;
}`,
    CHECK_ANSWER_PROPERTIES,
  ),
  {
    name: "toctou",
    title: "the window between check and use",
    mistake:
      "The chapter's tools check a path, then open it by name. Another process (a bash job, a second agent)\ncan swap a directory on the way for a symlink between the two, and the open follows it outside. No\ncheck by name can close this: the open itself must refuse to leave the root.",
    task: "give the agent tools that open what they checked. The package ships one answer; find it in\nits public exports (its README, \"The package's own tools\": createVerifiedWorkspaceTools).",
    source(checkCommand) {
      return toolsForkSource(header(this.name, this.title, this.mistake, this.task, checkCommand));
    },
    checks: [
      { command: "toctou", args: ["--mode", "deterministic", "--target", "{fork}"], shows: "a directory swapped between check and use lets nothing out" },
      auditStep(TOOL_PROPERTIES),
    ],
  },
];
