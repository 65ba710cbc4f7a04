/**
 * `workspace-gates toctou`: the demonstration of the window the chapter cannot close, in one of two
 * modes (deterministic.ts, race.ts), against a tool set picked by name (tool-sets.ts), a module that
 * exports `createWorkspaceTools`, or (race mode only) an MCP server through the audit's MCP client.
 *
 * Promises, beyond those of every CliCommand: all files live in one fresh temp directory made by
 * `createSandbox`, which is removed before `run` resolves: on success, on failure, and on Ctrl-C or
 * SIGTERM (the run stops after the tool call in flight, the racer is stopped first, and the answer is
 * 128 + the signal number). The report is printed, and with `--json` and `--sarif` written, before
 * the removal, also when interrupted. Exit 1 means the boundary broke: content escaped or something changed outside
 * the workspace (as `audit` exits 1 when a property fails); 0 that neither was seen; 2 that the
 * demonstration could not run, that the racer made no swap (race ineffective), or, in deterministic
 * mode, could not place the attacker's move because no check was seen.
 * Does not promise: that exit 0 means the tools are safe; a race that found nothing proves nothing.
 */
import { writeFile } from "node:fs/promises";
import { type Sandbox, createSandbox } from "../sandbox/sandbox.js";
import { type CliCommand, type CliIo, messageOf, unwritable } from "../cli-command.js";
import { type DeterministicReport, runDeterministic } from "./deterministic.js";
import { TOCTOU_USAGE, type ToctouPictures, type ToctouPlan, parseToctouFlags } from "./flags.js";
import { guardInterrupts } from "./interrupt.js";
import { type RaceBudget, type RaceReport, runRace } from "./race.js";
import { renderDeterministicSummary, renderRaceSummary, toctouFindings } from "./report.js";
import { renderTimelineSvg } from "./timeline-svg.js";
import { renderRaceSvg } from "./race-svg.js";
import { toctouSarif } from "./sarif.js";
import { type RenderPng, pngRenderer } from "../picture/png.js";
import { fallbackLocationNote, findingsLocation } from "../findings/sarif.js";
import { TOOL_SETS, attackedTools } from "../sandbox/tool-sets.js";
import type { Tool } from "../../gates/tool.js";
import { type Surface, moduleSurface } from "../operations/surface.js";
import { loadTarget, surfaceOf } from "../operations/target.js";
import { FILESYSTEM_SERVER_MAPPING, readMapping } from "../mcp/mapping.js";
import { mcpTarget } from "../mcp/target.js";
import type { ToctouTarget } from "./flags.js";

export const TEMP_PREFIX = "workspace-gates-toctou-";

export const toctouCommand: CliCommand = {
  name: "toctou",
  summary: "show the check-then-use (TOCTOU) window: read and write escape through a swapped directory",
  synopsis: "workspace-gates toctou [--mode deterministic|race] [--tools NAME | --target MODULE | --mcp [--mapping FILE] -- COMMAND...] [flags]",
  usage: TOCTOU_USAGE,
  async run(argv, io) {
    const plan = parseToctouFlags(argv);
    if (plan.help) {
      io.stdout(TOCTOU_USAGE);
      return 0;
    }
    // Found out before the run, not after a race of a minute whose verdict would then be lost.
    for (const [flag, file] of [["--json", plan.json], ["--sarif", plan.sarif], ["--svg", plan.svg], ["--png", plan.png]] as const) {
      const problem = file === undefined ? undefined : await unwritable(file);
      if (problem !== undefined) {
        io.stderr(`toctou: cannot write ${flag} ${file}: ${problem}\n`);
        return 2;
      }
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
  let target: AttackedTarget | undefined;
  try {
    // Found out before the run, not after ten seconds of it: a --png this machine cannot draw.
    const renderPng = plan.png === undefined ? undefined : await pngRenderer();
    const drawPictures = (svg: string, what: string) => writePictures(svg, plan, renderPng, (file) => narrate(`${what} ${file}`));
    target = await attackedTarget(plan.target);
    box = await createSandbox(TEMP_PREFIX);
    await target.ready(box.root);
    const run = { box, toolsName: plan.tools, narrate, signal };
    let report: DeterministicReport | RaceReport | (RaceReport & { control: ControlRace });
    let code: number;
    if (plan.mode === "deterministic") {
      report = await runDeterministic({ ...run, tools: attackedTools(target.tools(box.root)) });
      io.stdout(renderDeterministicSummary(report));
      code = deterministicExitCode(report);
      await drawPictures(renderTimelineSvg(report), "timeline written to");
    } else {
      const raced = await runRace({ ...run, surface: target.surface(box.root), budget: plan.budget });
      io.stdout(renderRaceSummary(raced));
      const isControl = plan.target.kind === "tools" && plan.target.name === CONTROL_TOOL_SET;
      if (!isControl && raced.stoppedBy !== "interrupted" && !plan.showControl)
        narrate(`control: racing the ${CONTROL_TOOL_SET} tools for the same budget, to show the racer can win (--show-control prints it line by line)`);
      const controlNarrate = plan.showControl ? (line: string) => narrate(`control: ${line}`) : () => {};
      const control = isControl || raced.stoppedBy === "interrupted" ? undefined : await raceControl(plan.budget, controlNarrate, signal);
      if (control !== undefined)
        narrate(`control (the ${CONTROL_TOOL_SET} tools, same budget): ${control.escapes} escapes in ${control.attempts} calls, ${control.swaps} swaps`);
      report = control === undefined ? raced : { ...raced, control };
      code = raceExitCode(raced, control);
      await drawPictures(renderRaceSvg(raced, control), "escapes over time drawn to");
      const ineffective = raceIneffective(raced, control);
      if (code === 2 && ineffective !== undefined) io.stderr(`toctou: race ineffective: ${ineffective}, so no count of escapes here means anything\n`);
    }
    if (plan.json !== undefined) {
      await writeFile(plan.json, `${JSON.stringify({ ...report, findings: toctouFindings(report) }, null, 2)}\n`);
      narrate(`report written to ${plan.json}`);
    }
    if (plan.sarif !== undefined) {
      const { target } = plan;
      const location = findingsLocation({
        named: plan.sarifLocation,
        module: target.kind === "module" ? target.path : undefined,
        mapping: target.kind === "mcp" ? target.mapping : undefined,
        command: target.kind === "mcp" ? target.command : undefined,
      });
      // The kit's own tool sets (--tools) are a demonstration, not the repository's code: nothing to say.
      if (location.fallback && target.kind !== "tools") io.stderr(`toctou: ${fallbackLocationNote(location.file, "--sarif-location")}\n`);
      await writeFile(plan.sarif, toctouSarif(report, location.file));
      narrate(`SARIF written to ${plan.sarif}`);
    }
    return code;
  } catch (error) {
    io.stderr(`toctou: could not run: ${messageOf(error)}\n`);
    return 2;
  } finally {
    await target?.dispose();
    if (box !== undefined) {
      await box.dispose();
      narrate(`removed ${box.base}`);
    }
  }
}

/** Writes the picture to the --svg and --png files asked for. */
async function writePictures(svg: string, files: ToctouPictures, renderPng: RenderPng | undefined, written: (file: string) => void): Promise<void> {
  if (files.svg !== undefined) {
    await writeFile(files.svg, svg);
    written(files.svg);
  }
  if (files.png !== undefined && renderPng !== undefined) {
    await writeFile(files.png, renderPng(svg));
    written(files.png);
  }
}

function deterministicExitCode(report: DeterministicReport): number {
  if (report.scenarios.some((scenario) => scenario.outcome === "no-check")) return 2;
  return report.contentEscapes > 0 || report.sideEffects.total > 0 ? 1 : 0;
}

/**
 * The attacked target on a root: its read and write tools for the deterministic mode, every tool by
 * operation for the race; `ready` starts what they need before the clock runs, `dispose` ends it.
 */
interface AttackedTarget {
  tools(root: string): Tool[];
  surface(root: string): Surface;
  ready(root: string): Promise<void>;
  dispose(): Promise<void>;
}

async function attackedTarget(target: ToctouTarget): Promise<AttackedTarget> {
  const nothing = async () => {};
  const ofTools = (tools: (root: string) => Tool[]): AttackedTarget => ({ tools, surface: (root) => moduleSurface(tools(root)), ready: nothing, dispose: nothing });
  if (target.kind === "tools") {
    const toolSet = TOOL_SETS.get(target.name);
    if (toolSet === undefined) throw new Error(`unknown tool set "${target.name}"`);
    return ofTools((root) => toolSet.create(root));
  }
  if (target.kind === "module") {
    const { createWorkspaceTools } = await loadTarget(target.path);
    if (createWorkspaceTools === undefined) throw new Error(`${target.path} exports no createWorkspaceTools function`);
    return ofTools((root) => createWorkspaceTools(root));
  }
  const server = mcpTarget(target.command, target.mapping === undefined ? FILESYSTEM_SERVER_MAPPING : await readMapping(target.mapping));
  await server.prepare();
  return {
    tools: (root) => server.createWorkspaceTools?.(root) ?? [],
    surface: (root) => surfaceOf(server, root),
    ready: (root) => server.start(root),
    dispose: () => server.dispose(),
  };
}

/** The tool set with a known window, raced beside any other target to show that the race can win. */
export const CONTROL_TOOL_SET = "chapter";

/** What the control race showed: enough to judge whether the racer could win at all. */
export interface ControlRace {
  tools: string;
  attempts: number;
  escapes: number;
  sideEffects: number;
  swaps: number;
  /** How long it raced, and when each escape came (ms from its start): the race picture draws it beside the target. */
  elapsedMs?: number;
  escapesAtMs?: number[];
}

async function raceControl(budget: RaceBudget, narrate: (line: string) => void, signal: AbortSignal): Promise<ControlRace> {
  const box = await createSandbox(TEMP_PREFIX);
  try {
    const control = TOOL_SETS.get(CONTROL_TOOL_SET);
    if (control === undefined) throw new Error(`no ${CONTROL_TOOL_SET} tool set`);
    const raced = await runRace({ box, toolsName: CONTROL_TOOL_SET, surface: moduleSurface(control.create(box.root)), budget, narrate, signal });
    return { tools: CONTROL_TOOL_SET, attempts: raced.total.attempts, escapes: raced.total.escapes, sideEffects: raced.sideEffects.total, swaps: raced.racer.swaps, elapsedMs: raced.elapsedMs, escapesAtMs: raced.escapesAtMs };
  } finally {
    await box.dispose();
  }
}

/** Why a race cannot support a clean verdict, if it cannot: no swap, or a control that never escaped. */
export function raceIneffective(report: RaceReport, control: ControlRace | undefined): string | undefined {
  if (report.racer.swaps === 0) return "the racer made no swap";
  const unswapped = Object.entries(report.perOperation).find(([, tally]) => tally.attempts > 0 && tally.swaps === 0);
  if (unswapped !== undefined) return `the racer never swapped the name that ${unswapped[0]} goes through`;
  if (control !== undefined && control.escapes === 0 && control.sideEffects === 0)
    return `the control (the ${control.tools} tools, whose window is known) did not escape in the same budget`;
  return undefined;
}

/**
 * Exit 1 on evidence of an escape; otherwise 2 when the racer failed or the race was ineffective (a
 * race that could not have won proves nothing, however clean), and 0 only for a race that could win.
 */
export function raceExitCode(report: RaceReport, control?: ControlRace): number {
  // Evidence found before the racer failed is still evidence.
  if (report.total.escapes > 0 || report.sideEffects.total > 0) return 1;
  if (report.racer.failure !== null) return 2;
  return raceIneffective(report, control) === undefined ? 0 : 2;
}
