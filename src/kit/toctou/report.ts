/**
 * How the TOCTOU demo shows its findings to a person: short paths, short quotes and the closing
 * summary of each mode.
 *
 * Promises: the summaries state every figure of the report they render (nothing is computed here
 * that the JSON does not hold), give content escapes and side effects outside the workspace each a
 * line of their own, say plainly when neither happened, and never call an absence of escapes a proof
 * of safety.
 * Does not promise: a stable format for machines; use `--json` for that.
 */
import { type Consequence, type Cwe, type Threat, findingLines, weaknessesOf } from "../findings/findings.js";
import { ORACLES } from "../operations/catalog.js";
import type { DeterministicReport } from "./deterministic.js";
import { RACE_OPERATIONS, type RaceReport, type Tally, raceEscapeOracle, stopReasonText } from "./race.js";
import { type SideEffects, describeSideEffects } from "./side-effects.js";

/** The rule of a run that changes nothing outside the workspace. */
export const OUTSIDE_RULE = "toctou.outside";

/**
 * One escape of a run, as the text, the JSON (`findings`) and the SARIF state it: the rule it broke
 * (`toctou.<tool or race operation>`, or `toctou.outside`), the consequence of the catalogue's oracle
 * its evidence broke, and the threat every escape here needs, a concurrent process.
 */
export interface ToctouFinding {
  rule: string;
  what: string;
  consequence: Consequence;
  threat: Threat;
  weaknesses: Cwe[];
  evidence: readonly string[];
}

/** What every escape of the demonstration needs: it is a race against another process. */
const THREAT: Threat = "a concurrent process";

export function toctouFindings(report: DeterministicReport | RaceReport): ToctouFinding[] {
  const found = (rule: string, consequence: Consequence, what: string, evidence: readonly string[]): ToctouFinding => ({
    rule,
    what,
    consequence,
    threat: THREAT,
    weaknesses: weaknessesOf(consequence, THREAT),
    evidence,
  });
  const calls =
    report.mode === "deterministic"
      ? report.scenarios
          .filter((scenario) => scenario.outcome === "escaped")
          // A read brings the outside in, a write changes it.
          .map((scenario) => found(`toctou.${scenario.tool}`, ORACLES[scenario.tool === "read" ? "secretInAnswer" : "outsideChanged"].consequence, `${scenario.tool} escaped on the first try`, [scenario.evidence]))
      : RACE_OPERATIONS.flatMap((operation) => {
          const tally = report.perOperation[operation];
          if (tally === undefined || tally.escapes === 0) return [];
          const first = tally.firstEscape === null ? "" : ` (the first at attempt ${tally.firstEscape.attempt}, ${tally.firstEscape.elapsedMs.toFixed(1)} ms)`;
          return [found(`toctou.${operation}`, ORACLES[raceEscapeOracle(operation)].consequence, `${tally.escapes} of ${tally.attempts} calls escaped${first}`, tally.evidence)];
        });
  const outside = report.sideEffects.total > 0 ? [found(OUTSIDE_RULE, "outside changed", `outside the workspace: ${describeSideEffects(report.sideEffects)}`, report.sideEffects.examples)] : [];
  return [...calls, ...outside];
}

/** Each finding with its consequence and threat, as the audit's text report gives a failure's. */
function findingsLines(report: DeterministicReport | RaceReport): string[] {
  const findings = toctouFindings(report);
  return findings.length === 0 ? [] : ["findings:", ...findings.flatMap((finding) => [`  ${finding.rule}: ${finding.what}`, ...findingLines(finding).map((line) => `    ${line}`)])];
}

export function percent(rate: number): string {
  return `${(rate * 100).toFixed(2)} %`;
}

export function renderDeterministicSummary(report: DeterministicReport): string {
  const lines = [""];
  const escaped = report.scenarios.filter((scenario) => scenario.outcome === "escaped").map((scenario) => scenario.tool);
  const unchecked = report.scenarios.filter((scenario) => scenario.outcome === "no-check").map((scenario) => scenario.tool);
  if (report.interrupted) lines.push("interrupted before every tool was attacked");
  if (escaped.length > 0)
    lines.push(
      `verdict: ${escaped.join(" and ")} escaped on the first try. Each checked its path, found it inside, and`,
      "then used it after the attacker had swapped a directory on the way for a symlink. A realpath check",
      "cannot close this window: the kernel looks the path up again, from scratch, when it is opened.",
    );
  if (unchecked.length > 0) lines.push(`no verdict for ${unchecked.join(" and ")}: the trap never saw a realpath check to strike after`);
  const contained = report.scenarios.filter((scenario) => scenario.outcome === "contained").map((scenario) => scenario.tool);
  if (contained.length > 0) lines.push(`contained: ${contained.join(" and ")} did not escape when the swap came right after the check`);
  lines.push(`content escapes: ${report.contentEscapes} of ${report.scenarios.length} tool calls`, ...sideEffectLines(report.sideEffects), ...findingsLines(report));
  return `${lines.join("\n")}\n`;
}

/** The side effects line, and under it the changes it quotes. */
function sideEffectLines(effects: SideEffects): string[] {
  return [`side effects outside the workspace: ${describeSideEffects(effects)}`, ...effects.examples.map((example) => `  ${example}`)];
}

export function renderRaceSummary(report: RaceReport): string {
  const { total, racer } = report;
  const firstOf = (tally: Tally) =>
    tally.firstEscape === null ? "none" : `its attempt ${tally.firstEscape.attempt}, at ${tally.firstEscape.elapsedMs.toFixed(1)} ms`;
  const rows: [string, Tally, string][] = [
    ...RACE_OPERATIONS.flatMap((operation) => {
      const tally = report.perOperation[operation];
      return tally === undefined ? [] : [[operation, tally, firstOf(tally)] as [string, Tally, string]];
    }),
    ["total", total, total.firstEscape === null ? "none" : `attempt ${total.firstEscape.attempt} (${total.firstEscape.operation}), at ${total.firstEscape.elapsedMs.toFixed(1)} ms`],
  ];
  const columns: [string, number, (tally: Tally) => string][] = [
    ["attempts", 9, (tally) => String(tally.attempts)],
    ["escapes", 8, (tally) => String(tally.escapes)],
    ["rate", 8, (tally) => percent(tally.escapeRate)],
    ["succeeded", 10, (tally) => String(tally.succeeded)],
    ["refused", 8, (tally) => String(tally.refused)],
    ["other errors", 13, (tally) => String(tally.otherErrors)],
    ["swaps", 8, (tally) => String(tally.swaps)],
  ];
  const row = (name: string, cells: string[], last: string) => `  ${name.padEnd(19)} ${cells.map((cell, index) => cell.padStart(columns[index]?.[1] ?? 0)).join(" ")}   ${last}`;
  const lines = [
    "",
    `result after ${seconds(report.elapsedMs)} (${stopReasonText(report.stoppedBy)}):`,
    row("operation", columns.map(([title]) => title), "first escape"),
    ...rows.map(([name, tally, first]) => row(name, columns.map(([, , cell]) => cell(tally)), first)),
    ...Object.entries(report.notApplicable).map(([operation, reason]) => `  ${operation.padEnd(19)} not applicable: ${reason}`),
    `  calls: ${total.attempts} in ${seconds(report.elapsedMs)} (${Math.round(report.callsPerSecond)} calls/s)`,
    `  racer: ${racer.swaps} swaps in ${seconds(racer.runningMs)} (${Math.round(racer.swapsPerSecond)} swaps/s);`,
    `         ${racer.evictions} directories a tool made in a free contested name were moved aside`,
  ];
  if (racer.failure !== null) lines.push(`  the racer failed: ${racer.failure}; the figures cover the time it ran`);
  lines.push(
    `content escapes: ${total.escapes} of ${total.attempts} tool calls`,
    ...RACE_OPERATIONS.flatMap((operation) => (report.perOperation[operation]?.evidence ?? []).map((evidence) => `  ${operation}: ${evidence}`)),
    ...sideEffectLines(report.sideEffects),
    ...findingsLines(report),
  );
  if (total.escapes > 0)
    lines.push(
      `${total.escapes} of ${total.attempts} tool calls escaped. Evidence: each escape of a write, a copy or a move's`,
      "destination is a file outside the workspace holding that attempt's own bytes (of an edit, its text);",
      "each read escape returned the canary secret, each listing escape named it; each mkdir escape is the",
      "directory it meant, made outside; each escape of a move's source carried the canary into the",
      "workspace, and each delete escape removed it (the race put it back).",
    );
  if (report.sideEffects.total > 0)
    lines.push(
      `${report.sideEffects.total} changes outside the workspace were found after the racer stopped (each new file or directory`,
      "that escaped is one; the overwritten canary is one however often it was hit).",
    );
  if (total.escapes === 0 && report.sideEffects.total === 0 && total.attempts > 0)
    lines.push(
      `rule of three: 0 escapes in ${total.attempts} calls puts the per-call escape rate below ${percent(3 / total.attempts)} (95 % confidence).`,
    );
  if (total.escapes === 0 && report.sideEffects.total === 0)
    lines.push(
      `no escape and nothing changed outside in ${total.attempts} attempts within the budget. That is not evidence`,
      "that the window is closed: it is a race, and the next run, a busier machine or a faster attacker can",
      "win it. Try more --seconds.",
    );
  return `${lines.join("\n")}\n`;
}

function seconds(ms: number): string {
  return `${(ms / 1_000).toFixed(1)} s`;
}
