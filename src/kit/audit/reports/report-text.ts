/**
 * How an audit reads for people: a table, and what each row needs said under it.
 *
 * Promises: one row per property (gate, property, verdict, runs, cases, time); under each failure, the rule,
 * its consequence and the threat it needs (findings.ts), the reason, the shrunk counterexample, the
 * command that replays exactly that case and the fingerprint a suppressions file names it by; under a
 * skipped property the exports it needs, under a not-applicable one why; the legend of the terms the
 * failures use (legend.ts), the same in every report. Known limits are listed as such, and warnings
 * with their consequence (the verdict is verdict.ts's); every run with a suppressions file says what
 * each entry did. A property not applicable because a package is not installed is named again before
 * the closing line, with the command that installs it. Before the closing line, the cases judged in
 * all (a probe aimed at a tree is one case, a tree one run), and the findings by severity and
 * consequence; then the closing line (verdict.ts).
 */
import type { PropertyResult, ShortOfFloor } from "../runner/run.js";
import { legendOf } from "./legend.js";
import { renderCoverage } from "../coverage.js";
import { CONSEQUENCES, type Consequence, DEFAULT_FAIL_ON, findingLines } from "../../findings/findings.js";
import { type AuditReport, type AuditResult, type ReplayPrefix, SHRINK_STOPPED, type TargetWords, fingerprintOf, replayCommand, total } from "./report.js";
import { type Summary, type VerdictRule, closingLine, summarize, verdict, warns } from "./verdict.js";

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
