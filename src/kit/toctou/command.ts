/**
 * `workspace-gates toctou`: the demonstration of the window the chapter cannot close, in one of two
 * modes (deterministic.ts, race.ts), against a tool set picked by name (tool-sets.ts).
 *
 * Promises, beyond those of every CliCommand: all files live in one fresh temp directory made by
 * `createSandbox`, which is removed before `run` resolves: on success, on failure, and on Ctrl-C or
 * SIGTERM (the run stops after the tool call in flight, the racer is stopped first, and the answer is
 * 128 + the signal number). The report is printed, and with `--json` written, before the removal,
 * also when interrupted. Exit 1 means the boundary broke: content escaped or something changed outside
 * the workspace (as `audit` exits 1 when a property fails); 0 that neither was seen; 2 that the
 * demonstration could not run or, in deterministic mode, could not place the attacker's move because
 * no check was seen.
 * Does not promise: that exit 0 means the tools are safe; a race that found nothing proves nothing.
 */
import { writeFile } from "node:fs/promises";
import { type Sandbox, createSandbox } from "../sandbox/sandbox.js";
import type { CliCommand, CliIo } from "../cli-command.js";
import { type DeterministicReport, runDeterministic } from "./deterministic.js";
import { TOCTOU_USAGE, type ToctouPlan, parseToctouFlags } from "./flags.js";
import { guardInterrupts } from "./interrupt.js";
import { type RaceReport, runRace } from "./race.js";
import { renderDeterministicSummary, renderRaceSummary } from "./report.js";
import { renderTimelineSvg } from "./timeline-svg.js";
import { TOOL_SETS, attackedTools } from "../sandbox/tool-sets.js";

export const TEMP_PREFIX = "workspace-gates-toctou-";

export const toctouCommand: CliCommand = {
  name: "toctou",
  summary: "show the check-then-use (TOCTOU) window: read and write escape through a swapped directory",
  usage: TOCTOU_USAGE,
  async run(argv, io) {
    const plan = parseToctouFlags(argv);
    if (plan.help) {
      io.stdout(TOCTOU_USAGE);
      return 0;
    }
    const guard = guardInterrupts();
    try {
      const code = await runInSandbox(plan, io, guard.signal);
      return guard.exitCode() ?? code;
    } finally {
      guard.dispose();
    }
  },
};

async function runInSandbox(plan: Exclude<ToctouPlan, { help: true }>, io: CliIo, signal: AbortSignal): Promise<number> {
  const narrate = (line: string) => io.stdout(`${line}\n`);
  let box: Sandbox | undefined;
  try {
    box = await createSandbox(TEMP_PREFIX);
    const toolSet = TOOL_SETS.get(plan.tools);
    if (toolSet === undefined) throw new Error(`unknown tool set "${plan.tools}"`);
    const run = { box, toolsName: plan.tools, tools: attackedTools(toolSet.create(box.root)), narrate, signal };
    let report: DeterministicReport | RaceReport;
    let code: number;
    if (plan.mode === "deterministic") {
      report = await runDeterministic(run);
      io.stdout(renderDeterministicSummary(report));
      code = deterministicExitCode(report);
      if (plan.svg !== undefined) {
        await writeFile(plan.svg, renderTimelineSvg(report));
        narrate(`timeline written to ${plan.svg}`);
      }
    } else {
      report = await runRace({ ...run, budget: plan.budget });
      io.stdout(renderRaceSummary(report));
      code = raceExitCode(report);
    }
    if (plan.json !== undefined) {
      await writeFile(plan.json, `${JSON.stringify(report, null, 2)}\n`);
      narrate(`report written to ${plan.json}`);
    }
    return code;
  } catch (error) {
    io.stderr(`toctou: could not run: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  } finally {
    if (box !== undefined) {
      await box.dispose();
      narrate(`removed ${box.base}`);
    }
  }
}

function deterministicExitCode(report: DeterministicReport): number {
  if (report.scenarios.some((scenario) => scenario.outcome === "no-check")) return 2;
  return report.contentEscapes > 0 || report.sideEffects.total > 0 ? 1 : 0;
}

function raceExitCode(report: RaceReport): number {
  if (report.racer.failure !== null) return 2;
  return report.total.escapes > 0 || report.sideEffects.total > 0 ? 1 : 0;
}
