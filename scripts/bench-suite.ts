/**
 * The bench's `suite` section: the wall time users pay on every push (`npm test`, `npm run audit`),
 * and the default audit's wall time against its budget, quiet and beside busy loops (child processes
 * spinning, two per core): the floor of runs runs whatever the load, so load stretches the wall time,
 * and these rows say by how much. Figures only: nothing here fails the run.
 */
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_TIME_SECONDS } from "../src/kit/audit/command/budget.js";
import type { Row } from "../test/support/bench-table.js";
import { startBusyLoops } from "../test/support/busy-loops.js";
import type { Section } from "./bench-section.js";

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Commands whose wall time users pay on every push. */
const SUITE_COMMANDS = [
  { label: "npm test", command: "npm", args: ["test"] },
  { label: "npm run audit", command: "npm", args: ["run", "audit"] },
] as const;

interface Timed {
  ms: number;
  exitCode: number | null;
  stdout: string;
}

function wallTime(command: string, args: readonly string[]): Promise<Timed> {
  const started = performance.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "ignore"] });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.on("error", reject);
    child.on("close", (exitCode) => resolvePromise({ ms: performance.now() - started, exitCode, stdout }));
  });
}

/** What a run's exit and its own count of what the budget judged (report-text.ts) say beside its time. */
function notesOf(run: Timed): string | undefined {
  const judged = run.stdout.match(/^judged: .*$/m)?.[0];
  const notes = [...(run.exitCode === 0 ? [] : [`exited with ${run.exitCode}`]), ...(judged === undefined ? [] : [judged])];
  return notes.length === 0 ? undefined : notes.join("; ");
}

/** Runs `body` beside two busy loops per core, ended when it is done. */
async function besideBusyLoops<T>(body: () => Promise<T>): Promise<{ loops: number; result: T }> {
  const loops = startBusyLoops();
  try {
    return { loops: loops.count, result: await body() };
  } finally {
    loops.stop();
  }
}

/** The default audit's wall time against its budget: the row's ratio is wall time over `--time`. */
function budgetRow(how: string, run: Timed): Row {
  const seconds = run.ms / 1_000;
  const notes = notesOf(run);
  return {
    section: "suite",
    measure: `npm run audit: wall time against its budget, ${how}`,
    gated: { value: seconds, unit: "s" },
    bare: { label: `--time ${DEFAULT_TIME_SECONDS}`, value: DEFAULT_TIME_SECONDS, unit: "s" },
    ratio: seconds / DEFAULT_TIME_SECONDS,
    ...(notes === undefined ? {} : { note: notes }),
  };
}

export const suiteSection: Section = {
  name: "suite",
  async run() {
    const rows: Row[] = [];
    let quietAudit: Timed | undefined;
    for (const { label, command, args } of SUITE_COMMANDS) {
      // One run each: they take a minute or more.
      const run = await wallTime(command, args);
      if (label === "npm run audit") quietAudit = run;
      const notes = notesOf(run);
      rows.push({ section: "suite", measure: `${label}: wall time`, gated: { value: run.ms / 1_000, unit: "s" }, ...(notes === undefined ? {} : { note: notes }) });
    }
    if (quietAudit !== undefined) rows.push(budgetRow("quiet", quietAudit));
    const busy = await besideBusyLoops(() => wallTime("npm", ["run", "audit"]));
    rows.push(budgetRow(`beside ${busy.loops} busy loops`, busy.result));
    return rows;
  },
};
