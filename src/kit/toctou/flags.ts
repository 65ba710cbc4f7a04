/**
 * The command line of `workspace-gates toctou`.
 *
 * Promises: `parseToctouFlags` accepts exactly the flags in `TOCTOU_USAGE` and answers a complete
 * plan with every default filled in; anything else (an unknown flag or tool set, a missing value, a
 * positional argument, a budget that is not a positive number, a race-only flag in deterministic mode)
 * throws `UsageError` with a message that names the problem.
 * Does not promise: that the `--json` path is writable; that is found out when the report is written.
 */
import { UsageError, parseCommandArgs } from "../cli-command.js";
import type { RaceBudget } from "./race.js";
import { DEFAULT_TOOL_SET, TOOL_SETS } from "../sandbox/tool-sets.js";

export const DEFAULT_RACE_BUDGET: RaceBudget = { attempts: 1_000_000, seconds: 10 };
const MAX_ATTEMPTS = 1_000_000_000;
const MAX_SECONDS = 3_600;
// Written out digits only: Number() alone would also take "0x10", "1e3" and " 5 ".
const WHOLE_NUMBER = { shape: /^\d+$/, name: "whole number" };
const DECIMAL_NUMBER = { shape: /^\d+(\.\d+)?$/, name: "number" };

export const TOCTOU_USAGE = `Usage: workspace-gates toctou [--mode deterministic|race] [--tools NAME] [--attempts N] [--seconds S] [--json FILE] [--svg FILE]

Shows the window between the tools' path check and their use of the path: a directory inside the
workspace is swapped for a symlink to a canary directory outside. The chapter's read and write follow
it out; the verified tools should not. Content escapes and side effects outside the workspace (files,
empty files, directories) are reported apart. Everything happens in a fresh temp directory, removed
at the end (also on Ctrl-C).

  --mode deterministic  the swap happens exactly between check and use, once per tool (default)
  --mode race           a racer thread flips the directory and the symlink while the tools run
  --tools NAME          the tool set to attack: ${[...TOOL_SETS.keys()].join(", ")} (default ${DEFAULT_TOOL_SET})
  --attempts N          race only: stop after N tool calls (default ${DEFAULT_RACE_BUDGET.attempts})
  --seconds S           race only: stop after S seconds (default ${DEFAULT_RACE_BUDGET.seconds}, at most ${MAX_SECONDS})
  --json FILE           also write the report as JSON to FILE
  --svg FILE            deterministic only: draw the run's check / swap / use timeline as SVG to FILE
  -h, --help            show this help

Exit status: 0 nothing escaped and nothing changed outside, 1 content escaped or something changed
outside, 2 could not run (bad flag, failed setup, no procfs for the verified tools, a deterministic
run that saw no check to strike after), 128+N interrupted by signal N (130 for Ctrl-C).
`;

export type ToctouPlan =
  | { help: true }
  | { help: false; mode: "deterministic"; tools: string; json: string | undefined; svg: string | undefined }
  | { help: false; mode: "race"; tools: string; json: string | undefined; budget: RaceBudget };

export function parseToctouFlags(argv: readonly string[]): ToctouPlan {
  const { values } = parseCommandArgs({
    args: [...argv],
    options: {
      mode: { type: "string" },
      tools: { type: "string" },
      attempts: { type: "string" },
      seconds: { type: "string" },
      json: { type: "string" },
      svg: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help === true) return { help: true };
  const tools = values.tools ?? DEFAULT_TOOL_SET;
  if (!TOOL_SETS.has(tools)) throw new UsageError(`unknown tool set "${tools}"; available: ${[...TOOL_SETS.keys()].join(", ")}`);
  const mode = values.mode ?? "deterministic";
  if (mode === "deterministic") {
    if (values.attempts !== undefined || values.seconds !== undefined)
      throw new UsageError("--attempts and --seconds bound a race; they apply to --mode race only");
    return { help: false, mode, tools, json: values.json, svg: values.svg };
  }
  if (mode !== "race") throw new UsageError(`unknown mode "${mode}"; use deterministic or race`);
  if (values.svg !== undefined) throw new UsageError("--svg draws the timeline of one check and one swap; it applies to --mode deterministic only");
  const budget: RaceBudget = {
    attempts: values.attempts === undefined ? DEFAULT_RACE_BUDGET.attempts : positive("--attempts", values.attempts, WHOLE_NUMBER, MAX_ATTEMPTS),
    seconds: values.seconds === undefined ? DEFAULT_RACE_BUDGET.seconds : positive("--seconds", values.seconds, DECIMAL_NUMBER, MAX_SECONDS),
  };
  return { help: false, mode, tools, json: values.json, budget };
}

function positive(flag: string, text: string, kind: { shape: RegExp; name: string }, max: number): number {
  const value = Number(text);
  if (!kind.shape.test(text) || !(value > 0) || value > max)
    throw new UsageError(`${flag} must be a positive ${kind.name} up to ${max}, got "${text}"`);
  return value;
}
