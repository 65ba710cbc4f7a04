/**
 * How an audit reads: a table for people, JSON for CI (JUnit and SARIF: report-formats.ts).
 *
 * Promises: one row per property (gate, property, verdict, runs, cases, time); under each failure, the rule,
 * its consequence and the threat it needs (findings.ts), the reason, the shrunk counterexample, the
 * command that replays exactly that case and the fingerprint a suppressions file names it by; under a
 * skipped property the exports it needs, under a not-applicable one why; the legend of the terms the
 * failures use (legend.ts), the same in every report. Known limits are listed as
 * such and do not count as failures; conformance (the chapter's exact texts) is counted apart and
 * fails the run only when the audit was asked to (`--conformance`, `--strict`). A guarantee's failure
 * fails the run when its consequence, or one its run also showed, is in the verdict's rule (every
 * escape always is; by default every consequence but a convention's); one that is not is a
 * `warning`, listed with its consequence. A finding a suppressions file set aside is `suppressed`,
 * listed with its reason, unless its run also showed a consequence the rule names; every run with a
 * suppressions file says what each entry did. A property not applicable because a package is not
 * installed is named again before the closing line, with the command that installs it. Before the
 * closing line, the cases judged in all (a probe aimed at a tree is one case, a tree one run); the
 * closing line has the form `audit: N passed, N failed, N skipped` (then `, N warnings`,
 * `, N suppressed` and `, N not applicable` when there are any).
 * The JSON report (`JSON_SCHEMA_VERSION`) carries the tool's name and version, the summary counts
 * and every result with its replay command.
 */
import type { PropertyResult, ShortOfFloor } from "../runner/run.js";
import { shellWord } from "../../shell-word.js";
import { VERSION } from "../../version.js";
import { legendOf } from "./legend.js";
import type { Counterexample } from "../runner/counterexample.js";
import type { Located } from "./located.js";
import type { Shard } from "../runner/shard.js";
import { COVERAGE_ID, type CoverageRow, renderCoverage } from "../coverage.js";
import { CONSEQUENCES, type Consequence, type Cwe, DEFAULT_FAIL_ON, type Threat, findingLines } from "../../findings/findings.js";
import { findingFingerprint } from "../../findings/sarif.js";
import { type Suppression, type SuppressionOutcome, type SuppressionsFile, judgeSuppressions } from "../../findings/suppressions.js";
import { type CallCount, type OptionCount, addCalls, addOptions, optionsFrom, optionsRecord } from "../../operations/surface.js";

/** Bumped when a field of the JSON report changes meaning or goes away (adding one does not). */
export const JSON_SCHEMA_VERSION = 3;

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
  results: AuditResult[];
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
  /** What the entries of `--suppressions` did to this run's findings. */
  suppressions?: SuppressionOutcome;
  /** Where the time went beside the properties: the target's pace (audit/pace.ts), and a server target's starts. */
  time?: AuditTime;
  /** Each failure's line in `location` (located.ts), by result id. */
  located?: Record<string, Located>;
}

export interface AuditTime {
  /** From the command's start to its report: loading the target, starting servers, the properties. */
  totalMs: number;
  /** The median time one call of the target's read tool took, measured before the properties ran. */
  latencyMs: number;
  /** The servers started (an MCP target: one per root) and how long their starts took together. */
  serverStarts?: { count: number; ms: number };
}

/** A finding set aside by a suppressions file: why, and until when. */
export type Suppressed = Omit<Suppression, "fingerprint">;

/** A property's result as reports show it: what the run found, and whether a suppression set it aside. */
export type AuditResult = PropertyResult & { suppressed?: Suppressed };

export interface Summary {
  total: number;
  passed: number;
  /** Failures that fail the run: guarantees whose consequence the rule names, and conformance when asked. */
  failed: number;
  /** Guarantees that failed with a consequence the rule leaves out (by default, a convention's). */
  warnings: number;
  /** Failures a suppressions file set aside. */
  suppressed: number;
  skipped: number;
  notApplicable: number;
  /** Properties left short of the runs every verdict needs (too slow to judge, cut at `--max-time`): neither passed nor failed. */
  unjudged: number;
  /** Known limits that failed, as the chapter's design does. */
  knownLimits: number;
  /** Conformance properties whose texts differ from the chapter's (failures only with `--conformance`). */
  conformanceDiffers: number;
  /** Guarantees and texts that failed, by consequence (suppressed ones apart): what a CI step branches on. */
  byConsequence: Partial<Record<Consequence, number>>;
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
  time?: AuditTime;
  suppressions?: SuppressionOutcome;
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
    /** Of those calls, per tool, how many sent each optional argument. */
    options?: Record<string, Record<string, number>>;
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
    /** The property ran short of its floor of runs: the target is too slow for this budget. */
    shortOfFloor?: ShortOfFloor;
    /** Of a failure: what a suppressions file names it by (the target, the rule, the consequence). */
    fingerprint?: string;
    suppressed?: Suppressed;
  }[];
}

export type JsonResult = JsonReport["results"][number];

/** How to run the audit again, e.g. `npx workspace-gates audit` or `npm run audit --`. */
export type ReplayPrefix = string;

/** The words that name the target on the command line: `[]`, `[MODULE]`, or `--mcp … -- COMMAND…`, with `--protect PATTERNS` before any `--`. */
export type TargetWords = readonly string[];

/** The module under audit, when the target is one (an MCP server has no file to point at). */
export function targetModule(target: TargetWords): string | undefined {
  // The module is the first word, before any flag of the target (`--protect`); a server's words start with `--mcp`.
  const [first] = target;
  return first !== undefined && !first.startsWith("--") ? first : undefined;
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

type Judged = Pick<PropertyResult, "status" | "kind" | "consequence" | "alsoSeen" | "shortOfFloor"> & { suppressed?: Suppressed };

/**
 * A result that fails the run: a broken guarantee that showed a consequence the rule names (one
 * without a consequence always does), or a text that differs when conformance was asked for. A
 * suppression sets aside the consequence it names; another its run also showed still counts.
 */
export function failsRun(result: Judged, rule: VerdictRule): boolean {
  if (result.status !== "failed") return false;
  if (result.kind === "conformance") return rule.conformance && result.suppressed === undefined;
  if (result.kind === "limit") return false;
  const counted = result.suppressed === undefined ? [result.consequence, ...(result.alsoSeen ?? [])] : (result.alsoSeen ?? []);
  return counted.some((consequence) => consequence === undefined || rule.failOn.includes(consequence));
}

/** A failure a suppressions file set aside, and nothing else its run showed fails the run. */
export const suppressedOnly = (result: Judged, rule: VerdictRule): boolean => result.status === "failed" && result.suppressed !== undefined && !failsRun(result, rule);

/** A guarantee that failed with no consequence the rule names, and no suppression set aside. */
export const warns = (result: Judged, rule: VerdictRule): boolean =>
  result.status === "failed" && result.kind === "guarantee" && result.suppressed === undefined && !failsRun(result, rule);

export function summarize(results: readonly Judged[], rule: VerdictRule): Summary {
  const count = (predicate: (result: Judged) => boolean) => results.filter(predicate).length;
  const byConsequence: Partial<Record<Consequence, number>> = {};
  for (const result of results) {
    if (result.status !== "failed" || result.kind === "limit" || result.suppressed !== undefined) continue;
    const consequence = result.consequence ?? (result.kind === "conformance" ? "wording differs" : "hardening broken");
    byConsequence[consequence] = (byConsequence[consequence] ?? 0) + 1;
  }
  return {
    total: results.length,
    passed: count((result) => result.status === "passed" && result.shortOfFloor === undefined),
    failed: count((result) => failsRun(result, rule)),
    warnings: count((result) => warns(result, rule)),
    suppressed: count((result) => suppressedOnly(result, rule)),
    skipped: count((result) => result.status === "skipped"),
    notApplicable: count((result) => result.status === "not-applicable"),
    unjudged: count((result) => result.status === "passed" && result.shortOfFloor !== undefined),
    knownLimits: count((result) => result.kind === "limit" && result.status === "failed"),
    conformanceDiffers: count((result) => result.kind === "conformance" && result.status === "failed"),
    byConsequence,
  };
}

/** What a suppressions file names a failure by: its target, its rule and its consequence. */
export function fingerprintOf(target: string, result: Pick<PropertyResult, "id" | "status" | "kind" | "consequence">): string | undefined {
  if (result.status !== "failed" || result.kind === "limit") return undefined;
  return findingFingerprint(target, result.id, result.consequence ?? (result.kind === "conformance" ? "wording differs" : "hardening broken"));
}

/**
 * The report with the entries of a suppressions file judged against its failures on `day`: each
 * failure an entry applies to carries the entry's reason (and date), and the report what every
 * entry did.
 */
export function withSuppressions(report: AuditReport, file: SuppressionsFile, day: string): AuditReport {
  const findings = report.results.flatMap((result) => {
    const fingerprint = fingerprintOf(report.target, result);
    return fingerprint === undefined || result.consequence === undefined ? [] : [{ fingerprint, consequence: result.consequence }];
  });
  return { ...report, results: report.results.map((result) => withSuppression(result, report.target, file, day)), suppressions: judgeSuppressions(file, findings, day) };
}

/** One result with what the file's entries do to it: set aside, with the reason and the date, when one applies. */
export function withSuppression(result: PropertyResult, target: string, file: SuppressionsFile, day: string): AuditResult {
  const fingerprint = fingerprintOf(target, result);
  if (fingerprint === undefined || result.consequence === undefined) return result;
  const entry = judgeSuppressions(file, [{ fingerprint, consequence: result.consequence }], day).applied.find((applied) => applied.fingerprint === fingerprint);
  if (entry === undefined) return result;
  const { fingerprint: _fingerprint, ...suppressed } = entry;
  return { ...result, suppressed };
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
    ...(report.time === undefined ? {} : { time: report.time }),
    ...(report.suppressions === undefined ? {} : { suppressions: report.suppressions }),
    ...(legend.length === 0 ? {} : { legend }),
    results: report.results.map((result) => {
      const replay = replayCommand(prefix, target, result);
      const fingerprint = fingerprintOf(report.target, result);
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
        ...(result.options === undefined ? {} : { options: result.options }),
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
        ...(result.shortOfFloor === undefined ? {} : { shortOfFloor: result.shortOfFloor }),
        ...(fingerprint === undefined ? {} : { fingerprint }),
        ...(result.suppressed === undefined ? {} : { suppressed: result.suppressed }),
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
  const format = aligned([header, ...rows], 3);
  lines.push(format(header));
  for (const [index, result] of report.results.entries()) {
    lines.push(format(rows[index] as string[]));
    if (result.status === "failed") lines.push(...failureDetail(result, replayCommand(prefix, target, result), fingerprintOf(report.target, result)));
    if (result.status === "skipped") lines.push(`    needs ${result.missing?.join(", ")}, which the module does not export`);
    if (result.status === "not-applicable") lines.push(`    not applicable: ${result.reason ?? "(no reason given)"}`);
    if (result.shortOfFloor !== undefined)
      lines.push(`    ${shortLine(result, result.shortOfFloor)}`);
  }
  const ids = (predicate: (result: AuditResult) => boolean) => report.results.filter(predicate).map((result) => result.id);
  const limits = ids((result) => result.kind === "limit" && result.status === "failed");
  const differs = ids((result) => result.kind === "conformance" && result.status === "failed");
  const warnings = report.results.filter((result) => warns(result, report)).map((result) => `${result.id} (${result.consequence ?? "no consequence"})`);
  const summary = summarize(report.results, report);
  lines.push("", ...renderCoverage(report.coverage));
  const legend = legendOf(report.results);
  if (legend.length > 0) lines.push("legend:", ...legend.map((line) => `  ${line}`), "");
  if (report.interrupted !== undefined) lines.push(`${report.interrupted}: only the properties above ran`);
  if (limits.length > 0) lines.push(`known limits (the reference fails them too, by design: SECURITY.md): ${limits.join(", ")}`);
  if (warnings.length > 0) lines.push(`warnings, which do not fail the run (${warningsBecause(report)}): ${warnings.join(", ")}`);
  if (report.suppressions !== undefined) lines.push(...renderSuppressions(report));
  lines.push(...notInstalled(report.results), judged(report.results));
  if (report.time !== undefined) lines.push(timeLine(report));
  if (differs.length > 0)
    lines.push(`conformance: texts differ from the reference's (docs/contract.md) in ${differs.join(", ")}${report.conformance ? "" : "; a failure only with --conformance or --strict"}`);
  const findings = findingsLine(summary);
  if (findings !== undefined) lines.push(findings);
  lines.push(closingLine(report.results, report));
  return `${lines.join("\n")}\n`;
}

/** A formatter for `rows` (the header among them): columns two spaces apart, each as wide as its widest cell, those from `rightFrom` on aligned right. */
export function aligned(rows: readonly (readonly string[])[], rightFrom = Infinity): (row: readonly string[]) => string {
  const widths = (rows[0] ?? []).map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0)));
  return (row) => row.map((cell, column) => (column >= rightFrom ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0))).join("  ").trimEnd();
}

/** The verdict words of the closing line, in its order: every row has one (`verdict`), so the counts add up to the rows. */
const CLOSING_WORDS: readonly [word: string, one: string, many: string][] = [
  ["passed", "passed", "passed"],
  ["FAILED", "failed", "failed"],
  ["skipped", "skipped", "skipped"],
  ["warning", "warning", "warnings"],
  ["suppressed", "suppressed", "suppressed"],
  ["too slow to judge", "too slow to judge", "too slow to judge"],
  ["cut at --max-time", "cut at --max-time", "cut at --max-time"],
  ["known limit", "known limit", "known limits"],
  ["passed (limit closed)", "limit closed", "limits closed"],
  ["differs", "text differs", "texts differ"],
  ["not applicable", "not applicable", "not applicable"],
];

/**
 * `audit: N passed, N failed, N skipped`, then the count of every other verdict word the rows have:
 * each row counted once, by the word the table gives it, so the line adds up to the table.
 */
export function closingLine(results: readonly Judged[], rule: VerdictRule): string {
  const words = results.map((result) => verdict(result, rule));
  const counted = CLOSING_WORDS.map(([word, one, many]) => {
    const count = words.filter((shown) => shown === word).length;
    return { count, text: `${count} ${count === 1 ? one : many}`, always: ["passed", "FAILED", "skipped"].includes(word) };
  });
  return `audit: ${counted.filter(({ count, always }) => always || count > 0).map(({ text }) => text).join(", ")}`;
}

/** How code scanning ranks a `security-severity` (CVSS): critical from 9, high from 7, medium from 4, low below. */
export function severityLevel(score: number | undefined): "critical" | "high" | "medium" | "low" | "none" {
  if (score === undefined) return "none";
  return score >= 9 ? "critical" : score >= 7 ? "high" : score >= 4 ? "medium" : "low";
}

/**
 * The findings of a run in one line, as `npm audit` sums its: how many by severity, then by
 * consequence, most severe first (a differing text counted as `wording differs`); none for a run
 * without findings.
 */
export function findingsLine(summary: Pick<Summary, "byConsequence">): string | undefined {
  const entries = (Object.keys(CONSEQUENCES) as Consequence[]).flatMap((consequence) => {
    const count = summary.byConsequence[consequence] ?? 0;
    return count === 0 ? [] : [{ consequence, count, level: severityLevel(CONSEQUENCES[consequence].securitySeverity) }];
  });
  const total = entries.reduce((sum, { count }) => sum + count, 0);
  if (total === 0) return undefined;
  const levels = (["critical", "high", "medium", "low", "none"] as const).flatMap((level) => {
    const count = entries.filter((entry) => entry.level === level).reduce((sum, entry) => sum + entry.count, 0);
    return count === 0 ? [] : [`${count} ${level === "none" ? "without a severity" : level}`];
  });
  return `findings: ${total} (${levels.join(", ")}): ${entries.map(({ consequence, count }) => `${count} ${consequence}`).join(", ")}`;
}

/** Why a guarantee's failure is only a warning: the default rule's conventions, or what `--fail-on` left out. */
function warningsBecause(rule: VerdictRule): string {
  const byDefault = rule.failOn.length === DEFAULT_FAIL_ON.length && DEFAULT_FAIL_ON.every((consequence) => rule.failOn.includes(consequence));
  return byDefault ? "the reference's conventions, departed from with no harm seen; --strict fails on them" : `--fail-on ${rule.failOn.join(",")} leaves out their consequences`;
}

/** What every entry of the suppressions file did, so that a run never sets a finding aside unsaid. */
function renderSuppressions({ suppressions, results }: AuditReport): string[] {
  if (suppressions === undefined) return [];
  const { file, expired, refused, unused } = suppressions;
  const until = (entry: { expires?: string }) => (entry.expires === undefined ? "" : ` (until ${entry.expires})`);
  const set = results.filter((result) => result.suppressed !== undefined);
  return [
    `suppressions (${file}): ${set.length === 0 ? "no finding set aside" : `${set.length} finding${set.length === 1 ? "" : "s"} set aside`}`,
    ...set.map((result) => `  ${result.id} (${result.consequence ?? "no consequence"}): ${result.suppressed?.reason ?? ""}${until(result.suppressed ?? {})}`),
    ...expired.map((entry) => `  expired on ${entry.expires ?? ""}, so its finding counts again: ${entry.fingerprint} (${entry.reason})`),
    ...refused.map((entry) => `  not applied: it names an escape, which is set aside only until a date (expires): ${entry.fingerprint} (${entry.reason})`),
    ...unused.map((entry) => `  matched no finding of this run: ${entry.fingerprint} (${entry.reason})`),
  ];
}

/** A not-applicable reason that names a package to install (memfs/world.ts words its own so). */
const NOT_INSTALLED = /^(\S+) is not installed \((npm i[^)]*)\)/;

/** The properties a missing optional package left unchecked, said once more where the verdict is read. */
function notInstalled(results: readonly AuditResult[]): string[] {
  return results.flatMap((result) => {
    const match = result.status === "not-applicable" ? NOT_INSTALLED.exec(result.reason ?? "") : null;
    return match === null ? [] : [`not checked: ${result.id} needs ${match[1]}, which is not installed here (${match[2]})`];
  });
}

/** A count of every result added up: the runs, cases or milliseconds of properties, or of shards. */
export function total<Field extends "runs" | "cases" | "timeMs">(results: readonly Pick<PropertyResult, Field>[], field: Field): number {
  return results.reduce((sum, result) => sum + result[field], 0);
}

type Counted = Pick<PropertyResult, "runs" | "cases" | "timeMs" | "calls" | "options">;

/** What several parts of one property's run did together (time-budget blocks, shards): runs, cases, time, calls and optional arguments, added up. */
export function addedUp(parts: readonly Counted[]): Counted {
  const calls: CallCount = new Map();
  const options: OptionCount = new Map();
  for (const part of parts) {
    addCalls(calls, new Map(Object.entries(part.calls)));
    addOptions(options, optionsFrom(part.options ?? {}));
  }
  return {
    runs: total(parts, "runs"),
    cases: total(parts, "cases"),
    timeMs: total(parts, "timeMs"),
    calls: Object.fromEntries(calls),
    ...(options.size === 0 ? {} : { options: optionsRecord(options) }),
  };
}

/** What a property short of its floor ran, and what the floor would take. */
function shortLine(result: Pick<PropertyResult, "runs" | "cases">, { floorRuns, neededMs, callMs, maxTimeSeconds }: ShortOfFloor): string {
  const ran = result.cases === 0 ? "judged nothing" : `judged ${result.cases} case${result.cases === 1 ? "" : "s"} in ${result.runs} of the ${floorRuns} runs a verdict needs`;
  if (callMs === undefined) return `${ran}: the audit reached --max-time ${maxTimeSeconds ?? "?"} first, though the target's calls were fast enough`;
  return `${ran}: the target is too slow for this budget (its calls take a median ${Math.round(callMs * 10) / 10} ms: the ${floorRuns} runs' calls would keep it busy about ${Math.ceil((neededMs ?? 0) / 1000)} s)`;
}

/** Where the time went: the properties', the servers' starts, and the pace of one call. */
function timeLine(report: AuditReport): string {
  const starts = report.time?.serverStarts;
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const started = starts === undefined ? "" : `, ${seconds(starts.ms)} starting ${starts.count} server${starts.count === 1 ? "" : "s"} (some at once)`;
  return `time: ${seconds(report.time?.totalMs ?? 0)} in all: ${seconds(total(report.results, "timeMs"))} in the properties${started}; one call took a median ${report.time?.latencyMs} ms`;
}

/** The cases of every property added up: what the audit's budget bought. */
export function judged(results: readonly Pick<PropertyResult, "runs" | "cases">[]): string {
  return `judged: ${total(results, "cases")} cases in ${total(results, "runs")} runs`;
}

/** A result's verdict word, the same in every report that shows one (the text's table, the page). */
export function verdict(result: Judged, rule: VerdictRule): string {
  if (result.status === "skipped") return "skipped";
  // Too few runs to say it holds: the line under the row says how many, and what the rest would take.
  if (result.shortOfFloor !== undefined) return result.shortOfFloor.callMs === undefined ? "cut at --max-time" : "too slow to judge";
  if (result.status === "not-applicable") return "not applicable";
  if (result.status === "passed") return result.kind === "limit" ? "passed (limit closed)" : "passed";
  if (result.kind === "limit") return "known limit";
  if (failsRun(result, rule)) return "FAILED";
  if (result.suppressed !== undefined) return "suppressed";
  return result.kind === "conformance" ? "differs" : "warning";
}

function failureDetail(result: PropertyResult, replay: string | undefined, fingerprint: string | undefined): string[] {
  const indent = (text: string) => text.split("\n").map((line) => `      ${line}`);
  return [
    `    rule: ${result.title}`,
    ...findingLines(result).map((line) => `    ${line}`),
    `    broken: ${result.reason ?? "(no reason given)"}`.split("\n").join("\n      "),
    "    counterexample:",
    ...indent(result.counterexample ?? "(none)"),
    ...(result.shrinkStopped === true ? [`    ${SHRINK_STOPPED}`] : []),
    ...(replay === undefined ? [] : [`    replay: ${replay}`]),
    ...(fingerprint === undefined ? [] : [`    fingerprint: ${fingerprint} (what a --suppressions entry names it by)`]),
  ];
}
