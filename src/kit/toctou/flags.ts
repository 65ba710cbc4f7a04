/**
 * The command line of `workspace-gates toctou`.
 *
 * Promises: `parseToctouFlags` accepts exactly the flags in `TOCTOU_USAGE` and answers a complete
 * plan with every default filled in; anything else (an unknown flag or tool set, a missing value, a
 * positional argument, a budget that is not a positive number, a race-only flag in deterministic mode)
 * throws `UsageError` with a message that names the problem.
 * Does not promise: that the `--json` or `--sarif` path is writable; that is found out when the report is written.
 */
import { UsageError, parseCommandArgs } from "../cli-command.js";
import type { RaceBudget } from "./race.js";
import { DEFAULT_TOOL_SET, TOOL_SETS } from "../sandbox/tool-sets.js";
import { splitAtServerCommand } from "../mcp/target.js";

export const DEFAULT_RACE_BUDGET: RaceBudget = { attempts: 1_000_000, seconds: 10 };
const MAX_ATTEMPTS = 1_000_000_000;
const MAX_SECONDS = 3_600;
// Written out digits only: Number() alone would also take "0x10", "1e3" and " 5 ".
const WHOLE_NUMBER = { shape: /^\d+$/, name: "whole number" };
const DECIMAL_NUMBER = { shape: /^\d+(\.\d+)?$/, name: "number" };

export const TOCTOU_USAGE = `Usage: workspace-gates toctou [--mode deterministic|race] [--tools NAME | --target MODULE | --mcp [--mapping FILE]] [--attempts N] [--seconds S] [--show-control] [--json FILE] [--sarif FILE [--sarif-location FILE]] [--svg FILE] [--png FILE] [-- COMMAND...]

Shows the window between the tools' path check and their use of the path: a directory inside the
workspace is swapped for a symlink to a canary directory outside. The chapter's read and write follow
it out; the verified tools should not. Content escapes and side effects outside the workspace (files,
empty files, directories) are reported apart. Everything happens in a fresh temp directory, removed
at the end (also on Ctrl-C).

  --mode deterministic  the swap happens exactly between check and use, once per tool (default)
  --mode race           a racer thread flips directories and files with symlinks to outside while
                        the tools write new files, overwrite, read and (where there is one) mkdir
  --tools NAME          the tool set to attack: ${[...TOOL_SETS.keys()].join(", ")} (default ${DEFAULT_TOOL_SET})
  --target MODULE       attack the read and write of a module that exports createWorkspaceTools
  --mcp -- COMMAND...   attack the MCP server COMMAND starts, as \`audit --mcp\` does ({root} is
                        the workspace root); race mode only, which is its default
  --mapping FILE        with --mcp: which tools play read and write (see docs/contract.md)
  --attempts N          race only: stop after N tool calls (default ${DEFAULT_RACE_BUDGET.attempts})
  --seconds S           race only: stop after S seconds (default ${DEFAULT_RACE_BUDGET.seconds}, at most ${MAX_SECONDS})
  --show-control        race only: print the control race (the chapter's tools, raced after any
                        other target to show the racer can win) line by line, not as one summary
  --json FILE           also write the report as JSON to FILE
  --sarif FILE          also write SARIF 2.1.0 (GitHub code scanning): one result per escape
  --sarif-location FILE the file every SARIF result points at (default: the --target module, else
                        the --mapping file, else the server's file in COMMAND, else package.json
                        of the working directory, said on stderr)
  --svg FILE            draw the run as SVG to FILE: deterministic, its check / swap / use timeline;
                        race, the escapes over time of the target beside its control
  --png FILE            draw the same picture as PNG to FILE, at twice its size, for a slide (with
                        or without --svg; needs the optional package @resvg/resvg-js and a font)
  -h, --help            show this help

Exit status: 0 nothing escaped and nothing changed outside, 1 content escaped or something changed
outside, 2 could not run (bad flag, failed setup, no procfs for the verified tools, a deterministic
run that saw no check to strike after, a race whose racer made no swap), 128+N interrupted by signal
N (130 for Ctrl-C).
`;

/** What the demonstration attacks: a tool set by name, a contract module, or an MCP server. */
export type ToctouTarget = { kind: "tools"; name: string } | { kind: "module"; path: string } | { kind: "mcp"; command: string[]; mapping?: string };

export type ToctouPlan =
  | { help: true }
  | ({ help: false; mode: "deterministic" } & ToctouPictures & ToctouReports)
  | ({ help: false; mode: "race"; budget: RaceBudget; showControl: boolean } & ToctouPictures & ToctouReports);

/** The run's picture, as SVG and as PNG: each file undefined when not asked for. */
export interface ToctouPictures {
  svg: string | undefined;
  png: string | undefined;
}

/** What every mode attacks and the report files it writes. */
interface ToctouReports {
  tools: string;
  target: ToctouTarget;
  json: string | undefined;
  sarif: string | undefined;
  sarifLocation: string | undefined;
}

export function parseToctouFlags(argv: readonly string[]): ToctouPlan {
  const { flags, command } = splitAtServerCommand(argv);
  const { values } = parseCommandArgs({
    args: flags,
    options: {
      mode: { type: "string" },
      tools: { type: "string" },
      attempts: { type: "string" },
      seconds: { type: "string" },
      json: { type: "string" },
      sarif: { type: "string" },
      "sarif-location": { type: "string" },
      target: { type: "string" },
      mcp: { type: "boolean" },
      mapping: { type: "string" },
      svg: { type: "string" },
      png: { type: "string" },
      "show-control": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help === true) return { help: true };
  const target = toctouTarget(values, command);
  const tools = target.kind === "tools" ? target.name : target.kind === "module" ? target.path : `mcp: ${target.command.join(" ")}`;
  const mode = values.mode ?? (target.kind === "mcp" ? "race" : "deterministic");
  if (values["sarif-location"] !== undefined && values.sarif === undefined) throw new UsageError("--sarif-location says where SARIF results point: give it with --sarif");
  const pictures: ToctouPictures = { svg: values.svg, png: values.png };
  const reports: ToctouReports = { tools, target, json: values.json, sarif: values.sarif, sarifLocation: values["sarif-location"] };
  if (mode === "deterministic") {
    if (target.kind === "mcp")
      throw new UsageError("--mode deterministic is not applicable over MCP: the fs trap cannot place a move inside another process; use --mode race");
    if (values.attempts !== undefined || values.seconds !== undefined)
      throw new UsageError("--attempts and --seconds bound a race; they apply to --mode race only");
    if (values["show-control"] === true) throw new UsageError("--show-control shows the control race; it applies to --mode race only");
    return { help: false, mode, ...pictures, ...reports };
  }
  if (mode !== "race") throw new UsageError(`unknown mode "${mode}"; use deterministic or race`);
  const budget: RaceBudget = {
    attempts: values.attempts === undefined ? DEFAULT_RACE_BUDGET.attempts : positive("--attempts", values.attempts, WHOLE_NUMBER, MAX_ATTEMPTS),
    seconds: values.seconds === undefined ? DEFAULT_RACE_BUDGET.seconds : positive("--seconds", values.seconds, DECIMAL_NUMBER, MAX_SECONDS),
  };
  return { help: false, mode, budget, showControl: values["show-control"] === true, ...pictures, ...reports };
}

function toctouTarget(
  values: { tools?: string | undefined; target?: string | undefined; mcp?: boolean | undefined; mapping?: string | undefined },
  command: string[] | undefined,
): ToctouTarget {
  const chosen = [values.tools, values.target, values.mcp].filter((value) => value !== undefined);
  if (chosen.length > 1) throw new UsageError("give one of --tools, --target and --mcp");
  if (values.mcp !== true && command !== undefined) throw new UsageError("a command after -- is for --mcp");
  if (values.mcp !== true && values.mapping !== undefined) throw new UsageError("--mapping is for --mcp");
  if (values.mcp === true) {
    if (command === undefined || command.length === 0) throw new UsageError("--mcp needs the server's command after --");
    return { kind: "mcp", command, ...(values.mapping === undefined ? {} : { mapping: values.mapping }) };
  }
  if (values.target !== undefined) return { kind: "module", path: values.target };
  const name = values.tools ?? DEFAULT_TOOL_SET;
  if (!TOOL_SETS.has(name)) throw new UsageError(`unknown tool set "${name}"; available: ${[...TOOL_SETS.keys()].join(", ")}`);
  return { kind: "tools", name };
}

function positive(flag: string, text: string, kind: { shape: RegExp; name: string }, max: number): number {
  const value = Number(text);
  if (!kind.shape.test(text) || !(value > 0) || value > max)
    throw new UsageError(`${flag} must be a positive ${kind.name} up to ${max}, got "${text}"`);
  return value;
}
