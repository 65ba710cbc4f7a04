/**
 * The audit for CI systems: JUnit XML (one test case per property) and SARIF 2.1.0 (GitHub code
 * scanning: one result per failed property), each as those systems accept it: the JUnit against the
 * schema Jenkins reads it by, the SARIF by the SARIF Multitool's GitHub rules (test/audit-reports.test.ts).
 *
 * Promises: JUnit: one `<testcase>` per property that was selected, `classname` its gate and `name` its
 * id; a result that fails the run carries a `<failure>` whose type is its consequence, with the rule,
 * the consequence and the threat, the reason, the counterexample and the replay command; skipped and
 * not-applicable properties are `<skipped>` with why; a known limit, a differing text that does not
 * fail the run, a warning (a consequence the rule leaves out) and a finding a suppressions file set
 * aside pass, with what they found and why they pass in `<system-out>`.
 * Every text is escaped, and characters XML 1.0 cannot hold are written as `\u{…}`. Every tool the
 * target offers is a suite property `tool <name>`: what it plays and its coverage verdict, with why;
 * the report's legend (legend.ts) is the suite property `legend`.
 * SARIF: one rule per property that ran; one result per failed guarantee (level `error`, `warning`
 * when the rule leaves its consequence out) and per differing text (`error` with `--conformance`,
 * `note` without), each with the rule, its consequence and threat, the reason, the counterexample and
 * the replay command, located at the report's `location` (findings/sarif.ts), at the line that names
 * what failed (located.ts), or at line 1 with a sentence saying no line does; when a suppressions
 * file was given, every result carries SARIF `suppressions`, accepted with the entry's reason for a
 * finding it set aside, empty for the others. Known limits are not
 * results: they are the chapter's, not the module's. The run's property bag lists every tool the
 * target offers with its coverage verdict, so an exclusion is repeated where the results are read;
 * the legend is in the run's property bag and in every rule's help, which code scanning shows beside
 * an alert.
 */
import { type JsonReport, type JsonResult, SHRINK_STOPPED, total } from "./report.js";
import { failsRun, verdict } from "./verdict.js";
import type { CoverageRow } from "../coverage.js";
import { findingLines } from "../../findings/findings.js";
import { VERSION } from "../../version.js";
import { type SarifResult, type SarifRule, toSarifLog } from "../../findings/sarif.js";

/** Written from the JSON report, so that `merge` writes them for shards as `audit` does for a run. */
export function toJUnit(report: JsonReport): string {
  const { summary } = report;
  const seconds = (ms: number) => (ms / 1000).toFixed(3);
  const suite = `workspace-gates audit of ${report.target}`;
  const skipped = summary.skipped + summary.notApplicable;
  const cases = report.results.map((result) => {
    const open = `    <testcase classname=${attribute(result.gate)} name=${attribute(result.id)} time="${seconds(result.timeMs)}"`;
    if (result.status === "skipped") return `${open}>\n      <skipped message=${attribute(`needs ${result.missing?.join(", ")}, which the module does not export`)}/>\n    </testcase>`;
    if (result.status === "not-applicable") return `${open}>\n      <skipped message=${attribute(`not applicable: ${result.reason ?? ""}`)}/>\n    </testcase>`;
    // Short of the runs every verdict needs: no pass, an error the CI system shows.
    if (result.status === "passed" && result.shortOfFloor !== undefined)
      return `${open}>\n      <error message=${attribute(`${verdict(result, report)}: ${result.shortOfFloor.callMs === undefined ? "the audit reached --max-time first" : "the target is too slow for this budget"}`)} type="unjudged"/>\n    </testcase>`;
    if (result.status === "passed") return `${open}/>`;
    const detail = failureText(result);
    if (failsRun(result, report))
      return `${open}>\n      <failure message=${attribute(result.reason ?? result.title)} type=${attribute(result.consequence ?? result.kind)}>${text(detail)}</failure>\n    </testcase>`;
    return `${open}>\n      <system-out>${text(`${passedBecause(result)}\n${detail}`)}</system-out>\n    </testcase>`;
  });
  const counts = `tests="${summary.total}" failures="${summary.failed}" errors="${summary.unjudged}" time="${seconds(total(report.results, "timeMs"))}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="workspace-gates audit" ${counts}>`,
    `  <testsuite name=${attribute(suite)} ${counts} skipped="${skipped}">`,
    "    <properties>",
    ...[
      ["workspace-gates", VERSION],
      ["target", report.target],
      ["seed", String(report.seed)],
      ["runs", String(report.runs)],
      ["conformance", String(report.conformance)],
      ["fail-on", report.failOn.join(",")],
      ...(report.interrupted === undefined ? [] : [["interrupted", report.interrupted]]),
      ...report.coverage.map((row) => [`tool ${row.tool}`, coverageLine(row)]),
      ...(report.legend === undefined ? [] : [["legend", report.legend.join("\n")]]),
    ].map(([name, value]) => `      <property name=${attribute(name as string)} value=${attribute(value as string)}/>`),
    "    </properties>",
    ...cases,
    "  </testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}

/** Why a failed result does not fail the run. */
function passedBecause(result: JsonResult): string {
  if (result.kind === "limit") return "known limit (the reference fails it too, by design: SECURITY.md)";
  if (result.suppressed !== undefined) return `suppressed: ${result.suppressed.reason}${result.suppressed.expires === undefined ? "" : ` (until ${result.suppressed.expires})`}`;
  if (result.kind === "conformance") return "text differs from the reference's (a failure only with --conformance or --strict)";
  return `warning: the verdict's rule leaves out its consequence (${result.consequence ?? "none"})`;
}

export function toSarif(report: JsonReport): string {
  const ran = report.results.filter((result) => result.status === "passed" || result.status === "failed");
  const reported = ran.filter((result) => result.status === "failed" && result.kind !== "limit");
  const rules = ran.map(
    (result): SarifRule => ({
      id: result.id,
      name: result.id.replace(/\.(\w)/g, (_dot, letter: string) => letter.toUpperCase()),
      title: result.title,
      description: `${result.title} (the ${result.gate} gate; a ${result.kind} of the workspace-gates audit).`,
      help: [
        "docs/contract.md of workspace-gates says how the property judges; a failure's message carries the counterexample and the command that replays it.",
        ...(report.legend === undefined ? [] : ["", "legend:", ...report.legend]),
      ].join("\n"),
      tags: [result.gate, result.kind],
      ...(reported.includes(result) && result.consequence !== undefined ? { finding: { consequence: result.consequence, weaknesses: result.weaknesses ?? [] } } : {}),
    }),
  );
  const results = reported.map(
    ({ suppressed, ...result }): SarifResult => ({
      ruleId: result.id,
      // A suppression changes whether a finding is open, not how grave it is.
      level: failsRun(result, report) ? "error" : result.kind === "guarantee" ? "warning" : "note",
      ...(result.located === undefined ? {} : { line: result.located.line }),
      message: [failureText(result), ...(result.located !== undefined && result.located.names === undefined ? [`location: line 1, as no line of ${report.location} names ${result.located.looked.join(" or ")}`] : [])].join("\n"),
      // A failed result always has both (run.ts, coverage.ts); the JSON's type leaves them optional for the rest.
      consequence: result.consequence ?? (result.kind === "conformance" ? "wording differs" : "hardening broken"),
      threat: result.threat ?? "the model's input alone",
      weaknesses: result.weaknesses ?? [],
      target: report.target,
      ...(report.suppressions === undefined ? {} : { suppression: suppressed === undefined ? null : { justification: suppressed.reason, ...(suppressed.expires === undefined ? {} : { expires: suppressed.expires }) } }),
      properties: { kind: result.kind, seed: report.seed, counterexample: result.counterexample ?? "(none)", ...(result.replay === undefined ? {} : { replay: result.replay }) },
    }),
  );
  const tools = report.coverage.map((row) => ({ tool: row.tool, plays: row.plays, verdict: row.verdict, why: row.why, attackedBy: row.attackedBy }));
  return toSarifLog({ rules, results, location: report.location, executionSuccessful: report.interrupted === undefined, properties: { tools, ...(report.legend === undefined ? {} : { legend: report.legend }) } });
}

/** A tool's coverage as one line: `list: attacked by containment.list (12)`, `excluded: excluded by --exclude-tool`. */
function coverageLine(row: CoverageRow): string {
  const calls = Object.entries(row.attackedBy).map(([id, count]) => `${id} (${count})`);
  return `${row.plays}; ${row.verdict}: ${row.verdict === "attacked" ? `by ${calls.join(", ")}` : row.why}`;
}

function failureText(result: JsonResult): string {
  const { replay } = result;
  return [
    `rule: ${result.title}`,
    ...findingLines(result),
    `broken: ${result.reason ?? "(no reason given)"}`,
    `counterexample:\n${result.counterexample ?? "(none)"}`,
    ...(result.shrinkStopped === true ? [SHRINK_STOPPED] : []),
    ...(replay === undefined ? [] : [`replay: ${replay}`]),
  ].join("\n");
}

// XML 1.0 allows tab, newline, carriage return and these ranges; anything else cannot be written even escaped.
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

function text(value: string): string {
  return value
    .replace(NOT_XML, (char) => `\\u{${(char.codePointAt(0) as number).toString(16)}}`)
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;");
}

function attribute(value: string): string {
  return `"${text(value).replaceAll('"', "&quot;").replaceAll("\n", "&#10;").replaceAll("\r", "&#13;").replaceAll("\t", "&#9;")}"`;
}
