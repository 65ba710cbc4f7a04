/**
 * `workspace-gates audit [MODULE | --mcp [--mapping FILE] -- COMMAND...] [flags]`: every property
 * against an implementation.
 *
 * The budget is time by default (`DEFAULT_TIME_SECONDS`, shared by the properties that run, each
 * taking an equal share of what those before it left, and each first running the runs `--runs 50`
 * gives it; a property capped by `maxRuns`, like the 10 s timeout case, runs on top);
 * `--runs N` asks for exactly N runs per property instead (a run of a tree-based property is a tree
 * and its probes, each a case: run.ts), for replays and for shards that must add
 * up to one run (`--shard K/N`, shard.ts). Sandboxes that reset cleanly are kept from one property to
 * the next (with an MCP target's servers on their roots) and removed when the audit ends.
 *
 * Promises: exit 0 when every guarantee was checked and holds (known limits may fail; a departure from
 * the chapter's conventions, and a text that differs from the chapter's, is a warning unless
 * `--strict`; a failure whose consequence `--fail-on` leaves out is a warning, but never an escape:
 * `outside changed` and `outside read` always fail; a finding an entry of `--suppressions` sets aside
 * is reported as suppressed, with its reason), 1 when any fails, 2 when the audit cannot
 * run or its verdict cannot be delivered: bad flag, unknown property, a module that fails to load or
 * exports none of the contract, a run that checked nothing, an unreadable baseline or suppressions
 * file, a report file that cannot be written (checked before the run, and again when written). With
 * `--baseline FILE` the verdict is the comparison instead, as strict as `--strict` for guarantees:
 * exit 1 when a property the baseline passed fails or is skipped here (a regression), or when a
 * guarantee failed with an escape, whatever the baseline held. Without MODULE it audits the package's own implementation. A failure
 * prints a replay command; with the printed `--seed` and `--path` it runs exactly that run again.
 * A run that hangs fails after `--timeout`. Progress goes to stderr. Ctrl-C (or SIGTERM) stops the
 * run: what ran so far is printed and written to the report files (marked `interrupted`), every
 * sandbox is removed, and the exit code is 128 + the signal number (130 for Ctrl-C). With `--mcp` the
 * target is an MCP server started by COMMAND (see mcp/target.ts): a mapped tool it lacks, or a server
 * that does not start, is exit 2 before any property runs, and a server that fails during the run is
 * exit 2 whatever the properties said. `--list-tools` starts the target, prints how the audit takes
 * each of its tools (tool-list.ts) and stops: exit 0, or 2 when the target cannot be started.
 */
import { constants } from "node:fs";
import { access, mkdir, open, rm, stat, writeFile } from "node:fs/promises";
import { type CliCommand, type CliIo, UsageError, closest, invocationOf, parseCommandArgs } from "../../cli-command.js";
import { guardInterrupts } from "../../toctou/interrupt.js";
import { PROPERTIES } from "../properties/index.js";
import { compareWithBaseline, readBaseline, renderComparison } from "../reports/baseline.js";
import { closeSandboxes, disposeSandboxes, poolSandboxes } from "../runner/property.js";
import { ROOT_NAMES, rootSpellings } from "../arbitraries/index.js";
import { progressOn } from "../runner/progress.js";
import { type AuditReport, type ReplayPrefix, type TargetWords, addedUp, failsRun, renderText, toJson, verdict, withSuppression, withSuppressions } from "../reports/report.js";
import { toJUnit, toSarif } from "../reports/report-formats.js";
import { type Consequence, DEFAULT_FAIL_ON, ESCAPES, STRICT_FAIL_ON, isConvention, parseFailOn } from "../../findings/findings.js";
import { type SuppressionsFile, SuppressionsError, readSuppressions, today } from "../../findings/suppressions.js";
import { toHtml } from "../reports/report-html.js";
import { fallbackLocationNote, findingsLocation } from "../../findings/sarif.js";
import type { AuditProperty } from "../runner/property.js";
import { DEFAULT_CASE_TIMEOUT_MS, type PropertyResult, type RunOptions, notRun, runProperty } from "../runner/run.js";
import { SHARD_STRIDE, type Shard, parseShard, shardBlock, timedShardStart } from "../runner/shard.js";
import { type AuditTarget, UnusableTarget, loadTarget, offeredTools, referenceTarget } from "../../operations/target.js";
import { COVERAGE_ID, coverageResult, coverageRows } from "../coverage.js";
import { type Pace, measurePace } from "../runner/pace.js";
import { renderToolList } from "../reports/tool-list.js";
import { locateFailures } from "../reports/located.js";
import { writeRegressionTests } from "../reports/regression-test.js";
import { FILESYSTEM_SERVER_MAPPING, readMapping } from "../../mcp/mapping.js";
import { type McpAuditTarget, mcpTarget, splitAtServerCommand } from "../../mcp/target.js";

/** Runs per property with `--runs` and no number; also the floor of the time budget, which the kill matrix holds forks to. */
export const DEFAULT_RUNS = 50;

/**
 * The default budget: what fits, with the 10 s timeout case and start-up, in under a minute on a
 * 2-core machine.
 */
export const DEFAULT_TIME_SECONDS = 40;

const SYNOPSIS = "workspace-gates audit [MODULE | --mcp [--mapping FILE] -- COMMAND...] [flags]";

const USAGE = `usage: workspace-gates audit [MODULE | --mcp [--mapping FILE] -- COMMAND...] [--time S | --runs N] [--seed N]
                             [--shard K/N] [--json FILE] [--junit FILE] [--sarif FILE [--sarif-location FILE]] [--html FILE]
                             [--strict | --fail-on C[,C...] | --baseline FILE] [--suppressions FILE]
                             [--only ID[,ID...]] [--exclude-tool NAME[,NAME...]] [--path P] [--conformance]
                             [--timeout MS] [--regression-test DIR]
       workspace-gates audit [MODULE | --mcp [--mapping FILE] -- COMMAND...] [--exclude-tool NAME[,NAME...]] --list-tools

  MODULE       a .js, .mjs or .ts module exporting isInside, workspacePath, createWorkspaceTools
               and/or runAgent (default: this package's implementation; docs/contract.md)
  --mcp -- COMMAND...
               audit the MCP server that COMMAND starts over stdio, one per workspace
               root: {root} in COMMAND is replaced by the root, or the root is appended
  --mapping FILE
               which MCP tools play read and write (default: those of
               @modelcontextprotocol/server-filesystem; format in docs/contract.md)
  --time S     seconds of cases, shared by the properties that run, each running at least the
               runs of --runs ${DEFAULT_RUNS} (default ${DEFAULT_TIME_SECONDS}; the one-case timeout property adds 10 s)
  --runs N     exactly N generated runs per property instead (some properties scale it down;
               a run of a tree-based property is one tree and up to 64 probes, each a case)
  --shard K/N  run the K-th of N disjoint blocks of runs (merge the reports with
               workspace-gates merge); with --runs, the N shards add up to one run
  --seed N     fast-check seed (default: random, printed)
  --json FILE  also write the results as JSON (schemaVersion, tool version, summary counts)
  --junit FILE also write JUnit XML: one test case per property
  --sarif FILE also write SARIF 2.1.0 (GitHub code scanning): one result per failure
  --html FILE  also write a page to read in a browser, one self-contained file: the verdict by
               consequence, the coverage, each failure with its counterexample drawn and its replay
  --sarif-location FILE
               the file every SARIF result points at (default: MODULE, else the --mapping
               file, else the server's file in COMMAND, else package.json of the working
               directory, said on stderr)
  --strict     fail on departures from the chapter's conventions and wording too (by default they
               are warnings: a correct module written otherwise passes)
  --fail-on CONSEQUENCES
               the consequences whose failures fail the run (comma-separated; default:
               ${DEFAULT_FAIL_ON.join(", ")}); ${ESCAPES.join(" and ")} always do
  --suppressions FILE
               set aside the findings whose fingerprints FILE lists, each with its reason and
               an optional expiry (format in docs/contract.md); every run says what each did
  --baseline FILE
               compare with an earlier --json report (e.g. fixtures/baseline.json, the
               reference's); exit 1 only on a regression
  --only IDS   run only these properties (comma-separated); coverage then judges only the
               tools of the operations they attack
  --exclude-tool NAMES
               never call these tools of the target, and say so in every report: a tool
               that takes a path and that nothing attacked fails the audit unless excluded
  --path P     replay one shrunk run (with --seed and a single --only)
  --conformance
               fail the run when a text differs from the reference's (conformance properties; --strict does too)
  --timeout MS a run (a tree and all its probes) that takes longer fails as a hang (default ${DEFAULT_CASE_TIMEOUT_MS})
  --regression-test DIR
               write, for each failure, DIR/<property>.test.mjs (DIR made if missing): a node:test file that lays
               out its counterexample and makes its calls again, failing until the bug is fixed
  --list-tools start the target, print how the audit takes each tool (operation, decided by its
               name, its schema or the mapping, its argument for each role, or why none), and stop

properties: ${PROPERTIES.map((property) => property.id).join(", ")}`;

export const auditCommand: CliCommand = {
  name: "audit",
  summary: "run every property against an implementation and report what it fails",
  synopsis: SYNOPSIS,
  usage: USAGE,
  async run(argv, io) {
    const began = performance.now();
    const options = parseAuditArgs(argv);
    const reports = reportFiles(options);
    for (const { flag, file } of reports) {
      const problem = await unwritable(file);
      if (problem !== undefined) return cannot(io, `cannot write ${flag} ${file}: ${problem}`);
    }
    let suppressions: SuppressionsFile | undefined;
    try {
      if (options.suppressions !== undefined) suppressions = await readSuppressions(options.suppressions);
    } catch (error) {
      if (error instanceof SuppressionsError) return cannot(io, error.message);
      throw error;
    }
    const testsProblem = options.regressionTest === undefined ? undefined : await notAWritableDirectory(options.regressionTest);
    if (testsProblem !== undefined) return cannot(io, `cannot write --regression-test ${options.regressionTest}: ${testsProblem}`);
    let target: AuditTarget | McpAuditTarget;
    try {
      target = await loadAuditTarget(options);
    } catch (error) {
      if (error instanceof UnusableTarget) return cannot(io, `cannot audit ${error.message}`);
      return cannot(io, `cannot load ${describeTarget(options)}: ${messageOf(error)}`);
    }
    try {
      if (options.listTools) {
        io.stdout(renderToolList(target.label, offeredTools(target)));
        return 0;
      }
      return await auditTarget(target, options, reports, io, suppressions, began);
    } finally {
      if ("dispose" in target) await target.dispose();
    }
  },
};

async function loadAuditTarget(options: AuditArgs): Promise<AuditTarget | McpAuditTarget> {
  const excluded = new Map(options.excludeTools.map((name) => [name, "excluded by --exclude-tool"]));
  if (options.mcp === undefined) {
    const target = options.module === undefined ? await referenceTarget() : await loadTarget(options.module);
    const offered = offeredTools(target).map((tool) => tool.name);
    const unknown = options.excludeTools.filter((name) => !offered.includes(name));
    if (unknown.length > 0) throw new UnusableTarget(`${target.label}: --exclude-tool names ${unknown.join(", ")}, which its createWorkspaceTools does not return (it returns: ${offered.join(", ") || "no tools"})`);
    return { ...target, excluded };
  }
  const target = mcpTarget(options.mcp.command, options.mcp.mapping === undefined ? FILESYSTEM_SERVER_MAPPING : await readMapping(options.mcp.mapping), excluded);
  await target.prepare();
  return target;
}

function describeTarget(options: AuditArgs): string {
  if (options.mcp !== undefined) return `the MCP server ${options.mcp.command.join(" ")}`;
  return options.module ?? "the reference";
}

function targetWords(options: AuditArgs): TargetWords {
  if (options.mcp === undefined) return options.module === undefined ? [] : [options.module];
  return ["--mcp", ...(options.mcp.mapping === undefined ? [] : ["--mapping", options.mcp.mapping]), "--", ...options.mcp.command];
}

async function auditTarget(
  target: AuditTarget | McpAuditTarget,
  options: AuditArgs,
  reports: ReportFile[],
  io: CliIo,
  suppressions: SuppressionsFile | undefined,
  began: number,
): Promise<number> {
  let baseline: { file: string; statuses: Awaited<ReturnType<typeof readBaseline>> } | undefined;
  if (options.baseline !== undefined) {
    try {
      baseline = { file: options.baseline, statuses: await readBaseline(options.baseline) };
    } catch (error) {
      return cannot(io, messageOf(error));
    }
  }
  let pace: Pace;
  try {
    pace = await measurePace(target);
  } catch (error) {
    return cannot(io, `cannot measure how fast ${target.label} answers: ${messageOf(error)}`);
  }
  target.latencyMs = pace.latencyMs;
  const guard = guardInterrupts();
  let report: AuditReport;
  try {
    report = await runAudit(options, target, io, guard.signal, suppressions);
  } finally {
    guard.dispose();
  }
  report.time = {
    totalMs: Math.round(performance.now() - began),
    latencyMs: Math.round(pace.latencyMs * 10) / 10,
    ...("starts" in target ? { serverStarts: { count: target.starts.count, ms: Math.round(target.starts.ms) } } : {}),
  };
  if (suppressions !== undefined) report = withSuppressions(report, suppressions, today());
  report.located = await locateFailures(report.results, report.coverage, report.location);
  const prefix = invocationOf(io, "audit");
  const words = targetWords(options);
  io.stdout(renderText(report, prefix, words));
  let written: string | undefined;
  for (const { flag, file, render } of reports) {
    written ??= await writeFile(file, render(report, prefix, words)).then(
      () => undefined,
      (error: unknown) => `cannot write ${flag} ${file}: ${messageOf(error)}`,
    );
  }
  if (written === undefined && options.regressionTest !== undefined)
    written = await writeRegressionTests(toJson(report, prefix, words), options.regressionTest).then(
      (listed) => void io.stdout(listed),
      (error: unknown) => `cannot write --regression-test ${options.regressionTest}: ${messageOf(error)}`,
    );
  const interrupted = guard.exitCode();
  if (interrupted !== undefined) {
    await closeSandboxes();
    return interrupted;
  }
  if (written !== undefined) return cannot(io, written);
  if ("serverFailure" in target && target.serverFailure !== undefined)
    return cannot(io, `the MCP server failed during the audit, so the verdict cannot stand: ${target.serverFailure}`);
  if (pace.trouble !== undefined)
    return cannot(io, `the target stopped answering while the audit measured how fast it answers, before any case ran, so its trouble is its own and the verdict cannot stand: ${pace.trouble}`);
  const trouble = report.results.find((result) => result.targetTrouble !== undefined);
  if (trouble !== undefined)
    return cannot(io, `the target stopped answering during ${trouble.id} and not when the case was done again, so its trouble is its own and the verdict cannot stand: ${trouble.targetTrouble}`);
  // Coverage judges the properties' calls: on its own it checked nothing.
  if (!report.results.some((result) => result.id !== COVERAGE_ID && (result.status === "passed" || result.status === "failed")))
    return cannot(io, `nothing was checked: every selected property needs an export ${target.label} does not have`);
  const slow = tooSlow(report);
  if (baseline === undefined) return report.results.some((result) => failsRun(result, report)) ? 1 : slow === undefined ? 0 : cannot(io, slow);
  const comparison = compareWithBaseline(baseline.file, baseline.statuses, report.results, options.conformance);
  io.stdout(renderComparison(comparison));
  // A baseline that failed a property too cannot make an escape green.
  const escaped = report.results.filter((result) => failsRun(result, { conformance: false, failOn: ESCAPES })).map((result) => result.id);
  if (escaped.length > 0) io.stdout(`escaped, which fails the run whatever the baseline: ${escaped.join(", ")}\n`);
  return comparison.regressions.length > 0 || escaped.length > 0 ? 1 : slow === undefined ? 0 : cannot(io, slow);
}

/**
 * Why no verdict stands on a run that found nothing but left some property short of its floor of
 * runs (`runWithinTime`): the pace measured, and the budget that would run every floor.
 */
function tooSlow(report: AuditReport): string | undefined {
  const short = report.results.filter((result) => result.shortOfFloor !== undefined);
  if (short.length === 0) return undefined;
  const unknown = short.filter((result) => result.shortOfFloor?.neededMs === undefined).length;
  const neededMs = report.results.reduce((sum, result) => sum + (result.shortOfFloor === undefined ? result.timeMs : (result.shortOfFloor.neededMs ?? 0)), 0);
  const budget = `${unknown === 0 ? "about" : "more than"} --time ${Math.ceil(neededMs / 1000)} would run ${unknown === 0 ? "them all" : `the ones measured (${unknown} judged nothing before their share ran out)`}`;
  return `the target is too slow to judge at this budget: its calls take a median ${report.time?.latencyMs ?? "?"} ms, and ${short.length} propert${short.length === 1 ? "y" : "ies"} ran short of the runs every verdict needs (${short.map((result) => result.id).join(", ")}); ${budget}`;
}

/** Runs the selected properties in order, with progress, until done or `signal` aborts. */
async function runAudit(options: AuditArgs, target: AuditTarget, io: CliIo, signal: AbortSignal, suppressions: SuppressionsFile | undefined): Promise<AuditReport> {
  const location = findingsLocation({ named: options.sarifLocation, module: options.module, mapping: options.mcp?.mapping, command: options.mcp?.command });
  if (options.sarif !== undefined && location.fallback) io.stderr(`audit: ${fallbackLocationNote(location.file, "--sarif-location")}\n`);
  const report: AuditReport = {
    target: target.label,
    seed: options.seed,
    runs: options.runs ?? 0,
    ...(options.runs === undefined ? { timeSeconds: options.time } : {}),
    ...(options.shard === undefined ? {} : { shard: options.shard }),
    conformance: options.conformance,
    failOn: options.failOn,
    location: location.file,
    results: [],
    coverage: [],
  };
  const selected = PROPERTIES.filter((property) => options.only === undefined || options.only.includes(property.id));
  const timed = new Set(selected.filter((property) => property.maxRuns === undefined && notRun(property, target) === undefined));
  const shares = timeShares(options.time * 1_000, timed.size);
  // A target whose tools start slowly (an MCP server per root) starts them for every root the
  // properties draw, a few at a time, while the first properties run.
  if (target.warm !== undefined) await poolSandboxes(ROOT_NAMES, (box) => target.warm?.(rootSpellings(box)));
  // Progress words a property as the table will: the rule, and the suppressions, are the report's.
  const progress = progressOn(io, (result) => verdict(suppressions === undefined ? result : withSuppression(result, report.target, suppressions, today()), report));
  const aborted = new Promise<undefined>((resolve) => signal.addEventListener("abort", () => resolve(undefined), { once: true }));
  try {
    for (const [index, property] of selected.entries()) {
      if (signal.aborted) break;
      const runs = Math.max(1, Math.round((options.runs ?? DEFAULT_RUNS) * (property.budgetScale ?? 1)));
      progress.start(index, selected.length, property.id);
      const common = { seed: options.seed, timeoutMs: options.timeoutMs, onCase: (started: number) => progress.atCase(started, runs), keepSandboxes: true };
      const result: PropertyResult | undefined = await Promise.race([
        options.runs === undefined
          ? runWithinTime(property, target, { ...common, firstRun: options.shard === undefined ? 0 : timedShardStart(options.shard), runs }, shares.next(), shares.fairMs)
          : runProperty(property, target, {
              ...common,
              ...shardBlock(runs, options.shard ?? { index: 1, count: 1 }),
              ...(options.path === undefined ? {} : { path: options.path }),
            }),
        aborted,
      ]);
      if (result === undefined) break;
      if (timed.has(property)) shares.spent(result.timeMs);
      report.results.push(result);
      progress.done(index, selected.length, result);
    }
  } finally {
    progress.end();
    // Every kept sandbox goes now, before the report is printed: an interrupted audit may be killed
    // while it prints. closeSandboxes also lets the case still running end first, and refuses new ones.
    await (signal.aborted ? closeSandboxes() : disposeSandboxes());
  }
  if (signal.aborted) {
    // What did not run attacked nothing, and the report says only what ran.
    report.interrupted = messageOf(signal.reason);
    return report;
  }
  report.coverage = coverageRows(offeredTools(target), report.results, options.only);
  report.results.push(coverageResult(report.coverage, options.seed));
  return report;
}

/**
 * The `--time` budget among the properties that run and are not capped: each one's share is an equal
 * part of what the ones before it left, so a property done early leaves its time to the rest, and one
 * that overran its share (its floor of runs took longer) takes it from them. `fairMs`, an equal part
 * of the whole, is what a property may take to show that its target is too slow, whatever the ones
 * before it spent.
 */
export function timeShares(totalMs: number, properties: number): { next(): number; spent(ms: number): void; readonly fairMs: number } {
  let leftMs = totalMs;
  let left = properties;
  return {
    next: () => leftMs / Math.max(1, left),
    spent(ms) {
      left -= 1;
      leftMs = Math.max(0, leftMs - ms);
    },
    fairMs: totalMs / Math.max(1, properties),
  };
}

/** How many shares a property's floor of runs may take before the target counts as too slow for it. */
export const SLOW_FACTOR = 4;

/**
 * A time budget that never runs fewer runs than `--runs`' default would on a target that can run
 * them: first one run, which tells what the floor costs; then, when the floor fits in `SLOW_FACTOR`
 * shares, exactly the rest of `floor.runs` (the kill matrix holds every fork to dying within those,
 * whatever the machine's speed), then further blocks of as many, from the next run of the same
 * stream, while time is left. Every run of a block goes to its end: none is abandoned to go on beside
 * the next property. On a target too slow for its floor (the first run alone outlasts the share, or
 * the floor would outlast `SLOW_FACTOR` shares), the property runs what fits in its share, the cases
 * cut at its end; when the runs done price the rest of the floor within `SLOW_FACTOR` shares (the first
 * run was only cold), the rest is run, else it says so (`shortOfFloor`, with about how long the floor
 * would take): the verdict then cannot be green. A failure shrinks until the share is spent (but for its first
 * `SHRINK_FLOOR_CANDIDATES`), so a property that fails over a slow target does not take the others'
 * time to shrink. A departure from a convention does not stop the blocks: it stays the result unless
 * a later block finds worse.
 */
async function runWithinTime(property: AuditProperty<unknown>, target: AuditTarget, floor: RunOptions, timeLimitMs: number, fairMs: number): Promise<PropertyResult> {
  // A run that outlasts a fair share of the budget (but for what it waits on purpose) is too slow for
  // any floor; a share that the properties before spent early takes no time from this test.
  const slowShareMs = Math.max(timeLimitMs, fairMs);
  const deadlineMs = slowShareMs + (property.waitsMs ?? 0);
  const short = (result: PropertyResult, floorRuns: number): PropertyResult =>
    searchesOn(result) ? { ...result, shortOfFloor: { floorRuns, ...(result.cases === 0 ? {} : { neededMs: Math.round(estimatedRunMs(result) * floorRuns) }) } } : result;
  if (property.maxRuns !== undefined) {
    const capped = await runProperty(property, target, { ...floor, shrinkDeadlineMs: timeLimitMs, caseDeadlineMs: deadlineMs });
    return capped.cutShort === true ? short(capped, Math.min(floor.runs, property.maxRuns)) : capped;
  }
  const first = floor.firstRun ?? 0;
  let result = await runProperty(property, target, { ...floor, runs: 1, shrinkDeadlineMs: timeLimitMs, caseDeadlineMs: deadlineMs });
  if (!searchesOn(result)) return result;
  /** The result so far and a further block of runs, one result: a departure already found needs no other one shrunk, a later block looks for worse. */
  const andThen = async (block: Partial<RunOptions>): Promise<PropertyResult> => {
    const departed = result.status === "failed";
    const more = await runProperty(property, target, { ...floor, ...block, ...(departed ? { departures: "note" as const } : {}) });
    const worse = departed && !searchesOn(more);
    const kept = departed && !worse ? result : more;
    return {
      ...kept,
      ...addedUp([result, more]),
      ...cut(result, more),
      ...(worse ? { alsoSeen: [...new Set([...(more.alsoSeen ?? []), result.consequence as Consequence])] } : {}),
      ...(result.targetTrouble === undefined ? {} : { targetTrouble: result.targetTrouble }),
    };
  };
  const floorMs = estimatedRunMs(result) * floor.runs;
  if (result.cutShort === true || floorMs > slowShareMs * SLOW_FACTOR) {
    const leftMs = slowShareMs - result.timeMs;
    const firstTry = result;
    if (result.cutShort !== true && leftMs > 0 && floor.runs > 1)
      result = await andThen({ runs: floor.runs - 1, firstRun: first + 1, shrinkDeadlineMs: leftMs, caseDeadlineMs: leftMs, interruptAfterMs: leftMs });
    // A first run pays for what the later ones find ready (a cache warmed, code compiled): the runs the
    // share ran after it price the rest of the floor better, and when it fits in the slow shares it is
    // run, the run the share's end cut done again whole.
    const restMs = slowShareMs * SLOW_FACTOR - result.timeMs;
    const whole = wholeRuns(result) ? result.runs : result.runs - 1;
    const afterFirst = { ...result, timeMs: result.timeMs - firstTry.timeMs, runs: result.runs - 1, cases: result.cases - firstTry.cases };
    if (searchesOn(result) && afterFirst.runs > 0 && whole < floor.runs && estimatedRunMs(afterFirst) * (floor.runs - whole) <= restMs) {
      const share = result;
      result = await andThen({ runs: floor.runs - whole, firstRun: first + whole, shrinkDeadlineMs: restMs, caseDeadlineMs: restMs, interruptAfterMs: restMs });
      if (whole < share.runs) result = redoneOnce(result, share.unjudged ?? 0);
    }
    return searchesOn(result) && wholeRuns(result) && result.runs >= floor.runs ? withoutCut(result) : short(result, floor.runs);
  }
  if (floor.runs > 1) result = await andThen({ runs: floor.runs - 1, firstRun: first + 1, shrinkDeadlineMs: timeLimitMs - result.timeMs });
  let next = first + floor.runs;
  while (searchesOn(result) && result.timeMs < timeLimitMs && next < SHARD_STRIDE + first) {
    result = await andThen({ firstRun: next, shrinkDeadlineMs: timeLimitMs - result.timeMs });
    next += floor.runs;
  }
  return result;
}

/** A result after which the blocks go on: one that passed, or failed only by departing from a convention. */
function searchesOn(result: PropertyResult): boolean {
  return result.status === "passed" || (result.status === "failed" && isConvention(result.consequence) && (result.alsoSeen ?? []).every(isConvention));
}

/**
 * What one whole run of a result took, counting what its cut cases left unjudged at the pace of the
 * cases judged; a run that judged nothing took at least its time (the estimate is then a floor).
 */
function estimatedRunMs(result: PropertyResult): number {
  const judgedShare = result.cases === 0 ? 1 : result.cases / (result.cases + (result.unjudged ?? 0));
  return result.timeMs / Math.max(1, result.runs) / judgedShare;
}

/** Whether every case of a result's runs was judged (a deadline may still have kept later runs from starting). */
const wholeRuns = (result: PropertyResult) => (result.unjudged ?? 0) === 0;

/** A result whose cut run was done again whole: counted once, and none of its first try's cases left unjudged. */
function redoneOnce(result: PropertyResult, firstTryUnjudged: number): PropertyResult {
  const unjudged = (result.unjudged ?? 0) - firstTryUnjudged;
  const { unjudged: _, ...rest } = result;
  return { ...rest, runs: result.runs - 1, ...(unjudged > 0 ? { unjudged } : {}) };
}

/** A result whose runs reached their floor, every case judged: a deadline that stopped later runs cut nothing a verdict needs. */
function withoutCut({ cutShort: _, ...whole }: PropertyResult): PropertyResult {
  return whole;
}

/** Whether either part was cut short, with the cases both left unjudged. */
function cut(one: PropertyResult, other: PropertyResult): Pick<PropertyResult, "cutShort" | "unjudged"> {
  const unjudged = (one.unjudged ?? 0) + (other.unjudged ?? 0);
  return { ...(one.cutShort === true || other.cutShort === true ? { cutShort: true as const } : {}), ...(unjudged > 0 ? { unjudged } : {}) };
}

interface ReportFile {
  flag: string;
  file: string;
  render: (report: AuditReport, prefix: ReplayPrefix, target: TargetWords) => string;
}

function reportFiles(options: AuditArgs): ReportFile[] {
  const files: ReportFile[] = [];
  if (options.json !== undefined)
    files.push({ flag: "--json", file: options.json, render: (report, prefix, target) => `${JSON.stringify(toJson(report, prefix, target), null, 2)}\n` });
  if (options.junit !== undefined) files.push({ flag: "--junit", file: options.junit, render: (report, prefix, target) => toJUnit(toJson(report, prefix, target)) });
  if (options.sarif !== undefined) files.push({ flag: "--sarif", file: options.sarif, render: (report, prefix, target) => toSarif(toJson(report, prefix, target)) });
  if (options.html !== undefined) files.push({ flag: "--html", file: options.html, render: (report, prefix, target) => toHtml(toJson(report, prefix, target)) });
  return files;
}

/**
 * Why `file` cannot be written, found before a long run rather than after it: opened for appending
 * (which changes nothing in an existing file) and removed again if this made it.
 */
async function unwritable(file: string): Promise<string | undefined> {
  let created = false;
  try {
    const handle = await open(file, "wx").then(
      (fresh) => {
        created = true;
        return fresh;
      },
      async (error: NodeJS.ErrnoException) => {
        if (error.code === "EEXIST") return open(file, "a");
        throw error;
      },
    );
    await handle.close();
    if (created) await rm(file);
    return undefined;
  } catch (error) {
    return messageOf(error);
  }
}

/** Why `dir` cannot take the regression tests, found before the run: it must be a directory this process may write in. */
/** Makes `dir` (and its parents) unless it exists; answers why it cannot hold the tests, or undefined. */
async function notAWritableDirectory(dir: string): Promise<string | undefined> {
  try {
    await mkdir(dir, { recursive: true });
    if (!(await stat(dir)).isDirectory()) return "not a directory";
    await access(dir, constants.W_OK);
    return undefined;
  } catch (error) {
    return messageOf(error);
  }
}

function cannot(io: CliIo, message: string): number {
  io.stderr(`audit: ${message}\n`);
  return 2;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

interface AuditArgs {
  module?: string;
  mcp?: { command: string[]; mapping?: string };
  /** Exactly this many runs per property; undefined for a time budget. */
  runs?: number;
  time: number;
  shard?: Shard;
  seed: number;
  json?: string;
  junit?: string;
  sarif?: string;
  sarifLocation?: string;
  html?: string;
  failOn: Consequence[];
  baseline?: string;
  suppressions?: string;
  only?: string[];
  excludeTools: string[];
  path?: string;
  conformance: boolean;
  timeoutMs: number;
  /** Print how the target's tools are taken, and stop. */
  listTools: boolean;
  /** The directory each failure's regression test is written into. */
  regressionTest?: string;
}

function parseAuditArgs(argv: readonly string[]): AuditArgs {
  const { flags, command = [] } = splitAtServerCommand(argv);
  const { values, positionals } = parseCommandArgs({
    args: flags,
    allowPositionals: true,
    options: {
      runs: { type: "string" },
      time: { type: "string" },
      shard: { type: "string" },
      seed: { type: "string" },
      json: { type: "string" },
      junit: { type: "string" },
      sarif: { type: "string" },
      "sarif-location": { type: "string" },
      html: { type: "string" },
      "fail-on": { type: "string", multiple: true },
      strict: { type: "boolean" },
      baseline: { type: "string" },
      suppressions: { type: "string" },
      only: { type: "string", multiple: true },
      "exclude-tool": { type: "string", multiple: true },
      path: { type: "string" },
      conformance: { type: "boolean" },
      timeout: { type: "string" },
      mcp: { type: "boolean" },
      mapping: { type: "string" },
      "list-tools": { type: "boolean" },
      "regression-test": { type: "string" },
    },
  });
  if (values["list-tools"] === true) refuseBesideListTools(values);
  if (values.mcp === true && positionals.length > 0) throw new UsageError(`--mcp audits a server, not a MODULE: got ${positionals.join(" ")}`);
  if (values.mcp === true && command.length === 0) throw new UsageError("--mcp needs the server's command after --, e.g. --mcp -- npx -y @modelcontextprotocol/server-filesystem {root}");
  if (values.mcp !== true && flags.length < argv.length) throw new UsageError("a command after -- is for --mcp");
  if (values.mcp !== true && values.mapping !== undefined) throw new UsageError("--mapping is for --mcp");
  if (positionals.length > 1) throw new UsageError(`expected at most one MODULE, got ${positionals.join(" ")}`);
  const only = values.only?.flatMap((ids) => ids.split(",")).filter((id) => id !== "");
  const unknown = only?.filter((id) => !PROPERTIES.some((property) => property.id === id)) ?? [];
  const ids = PROPERTIES.map((property) => property.id);
  const named = (id: string) => `${id}${closest(id, ids) === undefined ? "" : ` (did you mean ${closest(id, ids)}?)`}`;
  if (unknown.length > 0) throw new UsageError(`unknown property: ${unknown.map(named).join(", ")}`);
  if (values.path !== undefined && (values.seed === undefined || only?.length !== 1))
    throw new UsageError("--path replays one run: give it with --seed and exactly one --only");
  if (values.runs !== undefined && values.time !== undefined) throw new UsageError("--runs and --time are two budgets: give one");
  const shard = values.shard === undefined ? undefined : parseShard(values.shard);
  if (values.shard !== undefined && shard === undefined) throw new UsageError(`--shard must be K/N with 1 <= K <= N, got ${JSON.stringify(values.shard)}`);
  if (shard !== undefined && values.seed === undefined) throw new UsageError("--shard needs --seed: every shard must draw from the same stream of runs");
  if (values["sarif-location"] !== undefined && values.sarif === undefined) throw new UsageError("--sarif-location says where SARIF results point: give it with --sarif");
  if (values["fail-on"] !== undefined && values.baseline !== undefined)
    throw new UsageError("--fail-on and --baseline are two verdicts: give one (against a baseline, a regression and an escape fail the run)");
  if (values.strict === true && values["fail-on"] !== undefined) throw new UsageError("--strict and --fail-on are two verdicts: give one (--strict fails on every consequence)");
  return {
    ...(positionals[0] === undefined ? {} : { module: positionals[0] }),
    ...(values.mcp === true ? { mcp: { command, ...(values.mapping === undefined ? {} : { mapping: values.mapping }) } } : {}),
    // A replay is one run: it needs no budget, and must not wait for one.
    ...(values.runs !== undefined || values.path !== undefined ? { runs: positiveInteger("--runs", values.runs, DEFAULT_RUNS) } : {}),
    time: positiveInteger("--time", values.time, DEFAULT_TIME_SECONDS),
    ...(shard === undefined ? {} : { shard }),
    seed: values.seed === undefined ? Math.floor(Math.random() * 0x7fffffff) : integer("--seed", values.seed),
    ...(values.json === undefined ? {} : { json: values.json }),
    ...(values.junit === undefined ? {} : { junit: values.junit }),
    ...(values.sarif === undefined ? {} : { sarif: values.sarif }),
    ...(values["sarif-location"] === undefined ? {} : { sarifLocation: values["sarif-location"] }),
    ...(values.html === undefined ? {} : { html: values.html }),
    // Against a baseline every status counts, conventions included: the report says so too.
    failOn: values["fail-on"] !== undefined ? parseFailOn(values["fail-on"]) : values.strict === true || values.baseline !== undefined ? [...STRICT_FAIL_ON] : [...DEFAULT_FAIL_ON],
    ...(values.baseline === undefined ? {} : { baseline: values.baseline }),
    ...(values.suppressions === undefined ? {} : { suppressions: values.suppressions }),
    ...(only === undefined ? {} : { only }),
    excludeTools: (values["exclude-tool"] ?? []).flatMap((names) => names.split(",")).filter((name) => name !== ""),
    ...(values.path === undefined ? {} : { path: values.path }),
    conformance: values.conformance === true || values.strict === true,
    timeoutMs: positiveInteger("--timeout", values.timeout, DEFAULT_CASE_TIMEOUT_MS),
    listTools: values["list-tools"] === true,
    ...(values["regression-test"] === undefined ? {} : { regressionTest: values["regression-test"] }),
  };
}

/** The flags of a target (MODULE, --mcp, --mapping, --exclude-tool) go with --list-tools; a flag of a run would be ignored, so it is refused. */
function refuseBesideListTools(values: Record<string, unknown>): void {
  const ofTheTarget = new Set(["list-tools", "mcp", "mapping", "exclude-tool"]);
  const others = Object.keys(values).filter((flag) => !ofTheTarget.has(flag));
  if (others.length > 0) throw new UsageError(`--list-tools starts the target and stops: it takes no ${others.map((flag) => `--${flag}`).join(", ")}`);
}

function integer(flag: string, text: string): number {
  if (!/^-?\d+$/.test(text)) throw new UsageError(`${flag} must be an integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

function positiveInteger(flag: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = integer(flag, text);
  if (value < 1) throw new UsageError(`${flag} must be at least 1, got ${value}`);
  return value;
}
