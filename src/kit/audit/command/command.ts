/**
 * `workspace-gates audit [MODULE | --mcp [--mapping FILE] -- COMMAND...] [flags]`: every property
 * against an implementation.
 *
 * The budget is time by default (`DEFAULT_TIME_SECONDS`, budget.ts: every property runs at least the
 * runs `--runs 50` gives it, however busy the machine, and `--max-time` caps the wall time);
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
 * file, a report file that cannot be written (checked before the run, and again when written), a
 * property left short of its floor of runs by a target too slow for the budget or by `--max-time`
 * (budget.ts), unless something failed, or an error of the audit's own (a sandbox it could not make
 * or remove, a tree it could not lay out: never a finding against the target, and exit 1 still when a
 * failure with a counterexample stands). With
 * `--baseline FILE` the verdict is the comparison instead, as strict as `--strict` for guarantees:
 * exit 1 when a property the baseline passed fails or is skipped here (a regression), or when a
 * guarantee failed with an escape, whatever the baseline held. Without MODULE it audits the package's own implementation. A failure
 * prints a replay command; with the printed `--seed` and `--path` it runs exactly that run again.
 * A run that hangs fails after `--timeout`. Progress goes to stderr. Ctrl-C (or SIGTERM) stops the
 * run: what ran so far is printed and written to the report files (marked `interrupted`), every
 * sandbox is removed, and the exit code is 128 + the signal number (130 for Ctrl-C); so too while the
 * target starts or its pace is measured (one line on stderr says so, and nothing was checked). With `--mcp` the
 * target is an MCP server started by COMMAND (see mcp/target.ts): a mapped tool it lacks, or a server
 * that does not start, is exit 2 before any property runs, and a server that fails during the run
 * (cannot be started again, or stops answering where no case makes it stop) is exit 2, unless a
 * property failed with a counterexample: that failure stands, exit 1, the server's trouble said on
 * stderr. `--list-tools` starts the target, prints how the audit takes
 * each of its tools (tool-list.ts) and stops: exit 0, or 2 when the target cannot be started.
 */
import { writeFile } from "node:fs/promises";
import { type CliCommand, type CliIo, invocationOf, messageOf, unwritable } from "../../cli-command.js";
import { type InterruptGuard, guardInterrupts } from "../../toctou/interrupt.js";
import { PROPERTIES } from "../properties/index.js";
import { compareWithBaseline, readBaseline, renderComparison } from "../reports/baseline.js";
import { closeSandboxes, disposeSandboxes, poolSandboxes, sweepSandboxes } from "../runner/property.js";
import { ROOT_NAMES, rootSpellings } from "../arbitraries/index.js";
import { progressOn } from "../runner/progress.js";
import { type AuditReport, type TargetWords, withSuppression, withSuppressions } from "../reports/report.js";
import { toJson } from "../reports/report-json.js";
import { renderText } from "../reports/report-text.js";
import { failsRun, verdict } from "../reports/verdict.js";
import { ESCAPES } from "../../findings/findings.js";
import { type SuppressionsFile, SuppressionsError, readSuppressions, today } from "../../findings/suppressions.js";
import { fallbackLocationNote, findingsLocation } from "../../findings/sarif.js";
import { type PropertyResult, notRun, runProperty } from "../runner/run.js";
import { shardBlock, timedShardStart } from "../runner/shard.js";
import { type AuditTarget, UnusableTarget, loadTarget, offeredTools, referenceTarget } from "../../operations/target.js";
import { COVERAGE_ID, coverageResult, coverageRows } from "../coverage.js";
import { type Pace, measurePace } from "../runner/pace.js";
import { renderToolList } from "../reports/tool-list.js";
import { locateFailures } from "../reports/located.js";
import { writeRegressionTests } from "../reports/regression-test.js";
import { SERVER_DID_NOT_START } from "../../mcp/client.js";
import { takeAuditFaults } from "../../sandbox/fault.js";
import { FILESYSTEM_SERVER_MAPPING, readMapping } from "../../mcp/mapping.js";
import { type McpAuditTarget, mcpTarget } from "../../mcp/target.js";
import { DEFAULT_RUNS, type MaxTime, budgetShares, runWithinTime, shortOfFloor } from "./budget.js";
import { type AuditArgs, SYNOPSIS, USAGE, parseAuditArgs } from "./flags.js";
import { type ReportFile, notAWritableDirectory, reportFiles } from "./report-files.js";

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
    // From here on Ctrl-C (or SIGTERM) stops the audit and removes what it made, a server that is
    // still starting included.
    const guard = guardInterrupts();
    try {
      let target: AuditTarget | McpAuditTarget;
      try {
        target = await loadAuditTarget(options, guard.signal);
      } catch (error) {
        const interrupted = guard.exitCode();
        if (interrupted !== undefined) return stopped(io, guard, `while ${describeTarget(options)} started: nothing was checked`);
        if (error instanceof UnusableTarget) return cannot(io, `cannot audit ${error.message}`);
        return cannot(io, `cannot load ${describeTarget(options)}: ${messageOf(error)}`);
      }
      try {
        if (options.listTools) {
          io.stdout(renderToolList(target.label, offeredTools(target)));
          return 0;
        }
        return await auditTarget(target, options, reports, io, suppressions, began, guard);
      } finally {
        // auditTarget ends the target's processes itself before its verdict (the sweep needs them
        // gone); this covers --list-tools, its early returns and a throw, and after it finds nothing to end.
        if ("dispose" in target) await target.dispose();
      }
    } finally {
      guard.dispose();
    }
  },
};

async function loadAuditTarget(options: AuditArgs, signal: AbortSignal): Promise<AuditTarget | McpAuditTarget> {
  const excluded = new Map(options.excludeTools.map((name) => [name, "excluded by --exclude-tool"]));
  if (options.mcp === undefined) {
    const target = options.module === undefined ? await referenceTarget() : await loadTarget(options.module);
    const offered = offeredTools(target).map((tool) => tool.name);
    const unknown = options.excludeTools.filter((name) => !offered.includes(name));
    if (unknown.length > 0) throw new UnusableTarget(`${target.label}: --exclude-tool names ${unknown.join(", ")}, which its createWorkspaceTools does not return (it returns: ${offered.join(", ") || "no tools"})`);
    return { ...target, excluded, ...(options.protect === undefined ? {} : { protect: options.protect }) };
  }
  const target = mcpTarget(options.mcp.command, options.mcp.mapping === undefined ? FILESYSTEM_SERVER_MAPPING : await readMapping(options.mcp.mapping), excluded, { signal });
  if (options.protect !== undefined) target.protect = [...(target.protect ?? []), ...options.protect];
  await target.prepare();
  return target;
}

function describeTarget(options: AuditArgs): string {
  if (options.mcp !== undefined) return `the MCP server ${options.mcp.command.join(" ")}`;
  return options.module ?? "the reference";
}

/** The words that name the target in a replay: the module or the server, and what its tools protect (without which `protected.*` would not apply). */
function targetWords(options: AuditArgs): TargetWords {
  const protect = options.protect === undefined ? [] : ["--protect", options.protect.map((pattern) => pattern.text).join(",")];
  if (options.mcp === undefined) return [...(options.module === undefined ? [] : [options.module]), ...protect];
  return ["--mcp", ...(options.mcp.mapping === undefined ? [] : ["--mapping", options.mcp.mapping]), ...protect, "--", ...options.mcp.command];
}

async function auditTarget(
  target: AuditTarget | McpAuditTarget,
  options: AuditArgs,
  reports: ReportFile[],
  io: CliIo,
  suppressions: SuppressionsFile | undefined,
  began: number,
  guard: InterruptGuard,
): Promise<number> {
  let baseline: { file: string; statuses: Awaited<ReturnType<typeof readBaseline>> } | undefined;
  if (options.baseline !== undefined) {
    try {
      baseline = { file: options.baseline, statuses: await readBaseline(options.baseline) };
    } catch (error) {
      return cannot(io, messageOf(error));
    }
  }
  // The audit's own faults are this run's, the pace's included: none of an earlier audit in this process.
  takeAuditFaults();
  let pace: Pace;
  try {
    pace = await measurePace(target);
  } catch (error) {
    if (guard.exitCode() !== undefined) {
      await closeSandboxes();
      return stopped(io, guard, `while the audit measured how fast ${target.label} answers: nothing was checked`);
    }
    return cannot(io, `cannot measure how fast ${target.label} answers: ${messageOf(error)}`);
  }
  target.latencyMs = pace.latencyMs;
  // --max-time counts from the command's start: the target's load and its pace are part of the wall time it caps.
  const maxTime = options.maxTime === undefined ? undefined : { at: began + options.maxTime * 1_000, seconds: options.maxTime };
  let report = await runAudit(options, target, io, guard.signal, suppressions, maxTime);
  // Its processes end before the verdict: one that outlived its sandbox may have written there again.
  if ("dispose" in target) await target.dispose();
  sweepSandboxes();
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
  const serverFailure = "serverFailure" in target ? target.serverFailure : undefined;
  const troubled = report.results.find((result) => result.targetTrouble !== undefined);
  const [fault] = takeAuditFaults();
  const trouble =
    fault !== undefined
      ? `the audit failed on its own, not through the target, so the verdict cannot stand: ${fault}`
      : serverFailure !== undefined
      ? `the MCP server failed during the audit, so the verdict cannot stand: ${serverFailure}`
      : pace.trouble !== undefined
        ? `the target stopped answering while the audit measured how fast it answers, before any case ran, so its trouble is its own and the verdict cannot stand: ${pace.trouble}`
        : troubled !== undefined
          ? `the target stopped answering during ${troubled.id} and not when the case was done again, so its trouble is its own and the verdict cannot stand: ${troubled.targetTrouble}`
          : undefined;
  if (trouble !== undefined) {
    // A failure with a counterexample stands whatever else the target did: its own trouble elsewhere
    // must not turn a finding into "no verdict". A call that threw because its server could not be
    // started is that trouble, not a finding; so is a tool left unattacked (coverage judges what the
    // trouble let run, and has no case to replay).
    const found = report.results.filter(
      (result) =>
        result.id !== COVERAGE_ID && failsRun(result, report) && result.counterexample !== undefined && result.counterexample !== "(none)" && !result.reason?.includes(SERVER_DID_NOT_START),
    );
    if (found.length === 0) return cannot(io, trouble);
    io.stderr(`audit: ${trouble}\naudit: ${found.map((result) => result.id).join(", ")} failed with a counterexample, which stands whatever the ${fault !== undefined ? "audit's" : "target's"} own trouble: exit 1\n`);
    return 1;
  }
  // Coverage judges the properties' calls: on its own it checked nothing.
  if (!report.results.some((result) => result.id !== COVERAGE_ID && (result.status === "passed" || result.status === "failed")))
    return cannot(io, `nothing was checked: every selected property needs an export ${target.label} does not have`);
  const slow = shortOfFloor(report.results);
  if (baseline === undefined) return report.results.some((result) => failsRun(result, report)) ? 1 : slow === undefined ? 0 : cannot(io, slow);
  const comparison = compareWithBaseline(baseline.file, baseline.statuses, report.results, options.conformance);
  io.stdout(renderComparison(comparison));
  // A baseline that failed a property too cannot make an escape green.
  const escaped = report.results.filter((result) => failsRun(result, { conformance: false, failOn: ESCAPES })).map((result) => result.id);
  if (escaped.length > 0) io.stdout(`escaped, which fails the run whatever the baseline: ${escaped.join(", ")}\n`);
  return comparison.regressions.length > 0 || escaped.length > 0 ? 1 : slow === undefined ? 0 : cannot(io, slow);
}

/** Runs the selected properties in order, with progress, until done or `signal` aborts. */
async function runAudit(
  options: AuditArgs,
  target: AuditTarget,
  io: CliIo,
  signal: AbortSignal,
  suppressions: SuppressionsFile | undefined,
  maxTime: MaxTime | undefined,
): Promise<AuditReport> {
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
  const shares = budgetShares(options.time * 1_000, timed.size, target.latencyMs ?? 0, maxTime);
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
          ? runWithinTime(property, target, { ...common, firstRun: options.shard === undefined ? 0 : timedShardStart(options.shard), runs }, shares.next())
          : runProperty(property, target, {
              ...common,
              ...shardBlock(runs, options.shard ?? { index: 1, count: 1 }),
              ...(options.path === undefined ? {} : { path: options.path }),
            }),
        aborted,
      ]);
      if (result === undefined) break;
      if (timed.has(property)) shares.spent(result);
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

/** An audit stopped by a signal before any property ran: one line saying so, and 128 + the signal's number. */
function stopped(io: CliIo, guard: InterruptGuard, when: string): number {
  io.stderr(`audit: ${messageOf(guard.signal.reason)} ${when}\n`);
  return guard.exitCode() as number;
}

function cannot(io: CliIo, message: string): number {
  io.stderr(`audit: ${message}\n`);
  return 2;
}

