/**
 * How an audit reads: a table for people, JSON for CI (JUnit and SARIF: report-formats.ts).
 *
 * Promises: one row per property (gate, property, verdict, runs, cases, time); under each failure, the rule,
 * its consequence and the threat it needs (findings.ts), the reason, the shrunk counterexample and the
 * command that replays exactly that case; under a
 * skipped property the exports it needs, under a not-applicable one why; the legend of the terms the
 * failures use (legend.ts), the same in every report. Known limits are listed as
 * such and do not count as failures; conformance (the chapter's exact texts) is counted apart and
 * fails the run only when the audit was asked to (`--conformance`). A guarantee's failure fails the run
 * when its consequence, or one its run also showed, is in `--fail-on` (every escape always is); one
 * that is not is `tolerated`, and said so. Before the closing line, the cases judged in all (a probe
 * aimed at a tree is one case, a tree one run); the closing line has the form
 * `audit: N passed, N failed, N skipped` (then `, N tolerated` and `, N not applicable` when there are any).
 * The JSON report (`JSON_SCHEMA_VERSION`) carries the tool's name and version, the summary counts
 * and every result with its replay command.
 */
import type { PropertyResult } from "./run.js";
import { shellWord } from "../shell-word.js";
import { VERSION } from "../version.js";
import { legendOf } from "./legend.js";
import type { Counterexample } from "./counterexample.js";
import type { Located } from "./located.js";
import type { Shard } from "./shard.js";
import { COVERAGE_ID, type CoverageRow, renderCoverage } from "./coverage.js";
import { type Consequence, type Cwe, DEFAULT_FAIL_ON, type Threat, findingLines } from "../findings/findings.js";
import { type CallCount, addCalls } from "../operations/surface.js";

/** Bumped when a field of the JSON report changes meaning or goes away (adding one does not). */
export const JSON_SCHEMA_VERSION = 2;

/** What a report says of a counterexample whose shrinking the deadline stopped (`shrinkStopped`). */
export const SHRINK_STOPPED = "shrinking stopped at the time budget's deadline: a smaller case may fail too";

export interface AuditReport {
  target: string;
  seed: number;
  /** Cases per property asked for; 0 under a time budget. */
  runs: number;
  /** The time budget shared by the properties, when the budget was time. */
  timeSeconds?: number;
  /** The block of cases this run took, when it is one shard of several (shard.ts). */
  shard?: Shard;
  results: PropertyResult[];
  /** Conformance failures fail the run (`--conformance`). */
  conformance: boolean;
  /** The consequences whose guarantee failures fail the run (`--fail-on`, the escapes always among them). */
  failOn: readonly Consequence[];
  /** The file every SARIF result points at (sarif.ts, `findingsFile`). */
  location: string;
  /** Set when the run stopped before every property ran (Ctrl-C): what stopped it. */
  interrupted?: string;
  /** Every tool the target offers, attacked or not (coverage.ts); its verdict is the `coverage.tools` result. */
  coverage: CoverageRow[];
  /** Each failure's line in `location` (located.ts), by result id. */
  located?: Record<string, Located>;
}

export interface Summary {
  total: number;
  passed: number;
  /** Failures that fail the run: guarantees whose consequence `--fail-on` names, and conformance when asked. */
  failed: number;
  /** Guarantees that failed with a consequence `--fail-on` leaves out. */
  tolerated: number;
  skipped: number;
  notApplicable: number;
  /** Known limits that failed, as the chapter's design does. */
  knownLimits: number;
  /** Conformance properties whose texts differ from the chapter's (failures only with `--conformance`). */
  conformanceDiffers: number;
}

export interface JsonReport {
  schemaVersion: number;
  tool: { name: "workspace-gates"; version: string };
  target: string;
  seed: number;
  runs: number;
  timeSeconds?: number;
  shard?: Shard;
  conformance: boolean;
  failOn: readonly Consequence[];
  interrupted?: string;
  /** The module under audit, when the target is one (an MCP server has no file to point at). */
  module?: string;
  /** The file every SARIF result points at. */
  location: string;
  summary: Summary;
  /** Every tool the target offers: what it plays, which properties called it and how often, or why none did. */
  coverage: CoverageRow[];
  /** What the terms the failures use stand for (legend.ts), a line each; absent when they use none. */
  legend?: string[];
  results: {
    id: string;
    gate: string;
    kind: PropertyResult["kind"];
    title: string;
    status: PropertyResult["status"];
    runs: number;
    cases: number;
    timeMs: number;
    /** Calls of each of the target's tools, by its own name. */
    calls: Record<string, number>;
    consequence?: Consequence;
    alsoSeen?: Consequence[];
    threat?: Threat;
    weaknesses?: Cwe[];
    counterexample?: string;
    /** The counterexample as data, when it is a case of calls (counterexample.ts). */
    case?: Counterexample;
    /** The line of `location` a SARIF result points at, and the name found there (located.ts). */
    located?: Located;
    shrinkStopped?: true;
    reason?: string;
    missing?: string[];
    replay?: string;
  }[];
}

export type JsonResult = JsonReport["results"][number];

/** How to run the audit again, e.g. `npx workspace-gates audit` or `npm run audit --`. */
export type ReplayPrefix = string;

/** The words that name the target on the command line: `[]`, `[MODULE]`, or `--mcp … -- COMMAND…`. */
export type TargetWords = readonly string[];

/** The module under audit, when the target is one (an MCP server has no file to point at). */
export function targetModule(target: TargetWords): string | undefined {
  return target.length === 1 ? target[0] : undefined;
}

export function replayCommand(prefix: ReplayPrefix, target: TargetWords, result: PropertyResult): string | undefined {
  // Coverage is judged from the whole run: no one case replays it.
  if (result.status !== "failed" || result.id === COVERAGE_ID) return undefined;
  // Whatever follows `--` belongs to the server's command, so it ends the line.
  const cut = target.includes("--") ? target.indexOf("--") : target.length;
  const parts = [...target.slice(0, cut), "--only", result.id, "--seed", String(result.seed)];
  if (result.path !== undefined) parts.push("--path", result.path);
  return [prefix, ...[...parts, ...target.slice(cut)].map(shellWord)].join(" ");
}

/** What fails a run: the consequences of `--fail-on`, and differing texts with `--conformance`. */
export interface VerdictRule {
  conformance: boolean;
  failOn: readonly Consequence[];
}

/** The verdict without `--fail-on` or `--conformance`. */
export const DEFAULT_VERDICT: VerdictRule = { conformance: false, failOn: DEFAULT_FAIL_ON };

type Judged = Pick<PropertyResult, "status" | "kind" | "consequence" | "alsoSeen">;

/**
 * A result that fails the run: a broken guarantee that showed a consequence the rule names (one
 * without a consequence always does), or a text that differs when conformance was asked for.
 */
export function failsRun(result: Judged, rule: VerdictRule): boolean {
  if (result.status !== "failed") return false;
  if (result.kind === "conformance") return rule.conformance;
  if (result.kind === "limit") return false;
  return [result.consequence, ...(result.alsoSeen ?? [])].some((consequence) => consequence === undefined || rule.failOn.includes(consequence));
}

/** A guarantee that failed with no consequence the rule names. */
export const tolerated = (result: Judged, rule: VerdictRule): boolean => result.status === "failed" && result.kind === "guarantee" && !failsRun(result, rule);

export function summarize(results: readonly Judged[], rule: VerdictRule): Summary {
  const count = (predicate: (result: Judged) => boolean) => results.filter(predicate).length;
  return {
    total: results.length,
    passed: count((result) => result.status === "passed"),
    failed: count((result) => failsRun(result, rule)),
    tolerated: count((result) => tolerated(result, rule)),
    skipped: count((result) => result.status === "skipped"),
    notApplicable: count((result) => result.status === "not-applicable"),
    knownLimits: count((result) => result.kind === "limit" && result.status === "failed"),
    conformanceDiffers: count((result) => result.kind === "conformance" && result.status === "failed"),
  };
}

export function toJson(report: AuditReport, prefix: ReplayPrefix, target: TargetWords): JsonReport {
  const module = targetModule(target);
  const legend = legendOf(report.results);
  return {
    schemaVersion: JSON_SCHEMA_VERSION,
    tool: { name: "workspace-gates", version: VERSION },
    target: report.target,
    seed: report.seed,
    runs: report.runs,
    ...(report.timeSeconds === undefined ? {} : { timeSeconds: report.timeSeconds }),
    ...(report.shard === undefined ? {} : { shard: report.shard }),
    conformance: report.conformance,
    failOn: report.failOn,
    ...(report.interrupted === undefined ? {} : { interrupted: report.interrupted }),
    ...(module === undefined ? {} : { module }),
    location: report.location,
    summary: summarize(report.results, report),
    coverage: report.coverage,
    ...(legend.length === 0 ? {} : { legend }),
    results: report.results.map((result) => {
      const replay = replayCommand(prefix, target, result);
      return {
        id: result.id,
        gate: result.gate,
        kind: result.kind,
        title: result.title,
        status: result.status,
        runs: result.runs,
        cases: result.cases,
        timeMs: result.timeMs,
        calls: result.calls,
        ...(result.consequence === undefined ? {} : { consequence: result.consequence }),
        ...(result.alsoSeen === undefined ? {} : { alsoSeen: result.alsoSeen }),
        ...(result.threat === undefined ? {} : { threat: result.threat }),
        ...(result.weaknesses === undefined ? {} : { weaknesses: result.weaknesses }),
        ...(result.counterexample === undefined ? {} : { counterexample: result.counterexample }),
        ...(result.case === undefined ? {} : { case: result.case }),
        ...(report.located?.[result.id] === undefined ? {} : { located: report.located[result.id] }),
        ...(result.shrinkStopped === undefined ? {} : { shrinkStopped: result.shrinkStopped }),
        ...(result.reason === undefined ? {} : { reason: result.reason }),
        ...(result.missing === undefined ? {} : { missing: result.missing }),
        ...(replay === undefined ? {} : { replay }),
      };
    }),
  };
}

export function renderText(report: AuditReport, prefix: ReplayPrefix, target: TargetWords): string {
  const budget = report.timeSeconds === undefined ? `--runs ${report.runs} (some properties scale it down)` : `${report.timeSeconds} s shared by the properties`;
  const shard = report.shard === undefined ? "" : `, shard ${report.shard.index}/${report.shard.count}`;
  const lines = [`workspace-gates audit of ${report.target} (seed ${report.seed}, ${budget}${shard})`, ""];
  const rows = report.results.map((result) => [result.gate, result.id, verdict(result, report), String(result.runs), String(result.cases), `${(result.timeMs / 1000).toFixed(1)}s`]);
  const header = ["gate", "property", "verdict", "runs", "cases", "time"];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)));
  const format = (row: string[]) => row.map((cell, column) => (column >= 3 ? cell.padStart(widths[column] as number) : cell.padEnd(widths[column] as number))).join("  ").trimEnd();
  lines.push(format(header));
  for (const [index, result] of report.results.entries()) {
    lines.push(format(rows[index] as string[]));
    if (result.status === "failed") lines.push(...failureDetail(result, replayCommand(prefix, target, result)));
    if (result.status === "skipped") lines.push(`    needs ${result.missing?.join(", ")}, which the module does not export`);
    if (result.status === "not-applicable") lines.push(`    not applicable: ${result.reason ?? "(no reason given)"}`);
  }
  const ids = (predicate: (result: PropertyResult) => boolean) => report.results.filter(predicate).map((result) => result.id);
  const limits = ids((result) => result.kind === "limit" && result.status === "failed");
  const differs = ids((result) => result.kind === "conformance" && result.status === "failed");
  const allowed = ids((result) => tolerated(result, report));
  const summary = summarize(report.results, report);
  lines.push("", ...renderCoverage(report.coverage));
  const legend = legendOf(report.results);
  if (legend.length > 0) lines.push("legend:", ...legend.map((line) => `  ${line}`), "");
  if (report.interrupted !== undefined) lines.push(`${report.interrupted}: only the properties above ran`);
  if (limits.length > 0) lines.push(`known limits (the reference fails them too, by design: SECURITY.md): ${limits.join(", ")}`);
  if (allowed.length > 0) lines.push(`tolerated (--fail-on ${report.failOn.join(",")} leaves out their consequences): ${allowed.join(", ")}`);
  lines.push(judged(report.results));
  if (differs.length > 0)
    lines.push(`conformance: texts differ from the reference's (docs/contract.md) in ${differs.join(", ")}${report.conformance ? "" : "; a failure only with --conformance"}`);
  lines.push(
    `audit: ${summary.passed} passed, ${summary.failed} failed, ${summary.skipped} skipped${summary.tolerated === 0 ? "" : `, ${summary.tolerated} tolerated`}${summary.notApplicable === 0 ? "" : `, ${summary.notApplicable} not applicable`}`,
  );
  return `${lines.join("\n")}\n`;
}

/** A count of every result added up: the runs, cases or milliseconds of properties, or of shards. */
export function total<Field extends "runs" | "cases" | "timeMs">(results: readonly Pick<PropertyResult, Field>[], field: Field): number {
  return results.reduce((sum, result) => sum + result[field], 0);
}

/** What several parts of one property's run did together (time-budget blocks, shards): runs, cases, time and calls, added up. */
export function addedUp(parts: readonly Pick<PropertyResult, "runs" | "cases" | "timeMs" | "calls">[]): Pick<PropertyResult, "runs" | "cases" | "timeMs" | "calls"> {
  const calls: CallCount = new Map();
  for (const part of parts) addCalls(calls, new Map(Object.entries(part.calls)));
  return { runs: total(parts, "runs"), cases: total(parts, "cases"), timeMs: total(parts, "timeMs"), calls: Object.fromEntries(calls) };
}

/** The cases of every property added up: what the audit's budget bought. */
export function judged(results: readonly Pick<PropertyResult, "runs" | "cases">[]): string {
  return `judged: ${total(results, "cases")} cases in ${total(results, "runs")} runs`;
}

/** A result's verdict word, the same in every report that shows one (the text's table, the page). */
export function verdict(result: Judged, rule: VerdictRule): string {
  if (result.status === "skipped") return "skipped";
  if (result.status === "not-applicable") return "not applicable";
  if (result.kind === "limit") return result.status === "failed" ? "known limit" : "passed (limit closed)";
  if (result.kind === "conformance" && !rule.conformance) return result.status === "failed" ? "differs" : "passed";
  if (tolerated(result, rule)) return "tolerated";
  return result.status === "failed" ? "FAILED" : "passed";
}

function failureDetail(result: PropertyResult, replay: string | undefined): string[] {
  const indent = (text: string) => text.split("\n").map((line) => `      ${line}`);
  return [
    `    rule: ${result.title}`,
    ...findingLines(result).map((line) => `    ${line}`),
    `    broken: ${result.reason ?? "(no reason given)"}`.split("\n").join("\n      "),
    "    counterexample:",
    ...indent(result.counterexample ?? "(none)"),
    ...(result.shrinkStopped === true ? [`    ${SHRINK_STOPPED}`] : []),
    ...(replay === undefined ? [] : [`    replay: ${replay}`]),
  ];
}
