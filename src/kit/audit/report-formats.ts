/**
 * The audit for CI systems: JUnit XML (one test case per property) and SARIF 2.1.0 (GitHub code
 * scanning: one result per failed property).
 *
 * Promises: JUnit: one `<testcase>` per property that was selected, `classname` its gate and `name` its
 * id; a result that fails the run carries a `<failure>` with the rule, the reason, the counterexample
 * and the replay command; skipped and not-applicable properties are `<skipped>` with why; a known limit
 * or a differing text that does not fail the run passes, with what it found in `<system-out>`. Every
 * text is escaped, and characters XML 1.0 cannot hold are written as `\u{…}`. Every tool the target
 * offers is a suite property `tool <name>`: what it plays and its coverage verdict, with why.
 * SARIF: one rule per property that ran; one result per failed guarantee (level `error`) and per
 * differing text (`error` with `--conformance`, `note` without), each with the rule, the reason, the
 * counterexample and the replay command, located at the module under audit. Known limits are not
 * results: they are the chapter's, not the module's. The run's property bag lists every tool the target
 * offers with its coverage verdict, so an exclusion is repeated where the results are read.
 */
import { type JsonReport, type JsonResult, failsRun } from "./report.js";
import type { CoverageRow } from "./coverage.js";
import { VERSION } from "../version.js";

/** Written from the JSON report, so that `merge` writes them for shards as `audit` does for a run. */
export function toJUnit(report: JsonReport): string {
  const { summary } = report;
  const seconds = (ms: number) => (ms / 1000).toFixed(3);
  const total = report.results.reduce((sum, result) => sum + result.timeMs, 0);
  const suite = `workspace-gates audit of ${report.target}`;
  const skipped = summary.skipped + summary.notApplicable;
  const cases = report.results.map((result) => {
    const open = `    <testcase classname=${attribute(result.gate)} name=${attribute(result.id)} time="${seconds(result.timeMs)}"`;
    if (result.status === "skipped") return `${open}>\n      <skipped message=${attribute(`needs ${result.missing?.join(", ")}, which the module does not export`)}/>\n    </testcase>`;
    if (result.status === "not-applicable") return `${open}>\n      <skipped message=${attribute(`not applicable: ${result.reason ?? ""}`)}/>\n    </testcase>`;
    if (result.status === "passed") return `${open}/>`;
    const detail = failureText(result);
    if (failsRun(result, report.conformance))
      return `${open}>\n      <failure message=${attribute(result.reason ?? result.title)} type=${attribute(result.kind)}>${text(detail)}</failure>\n    </testcase>`;
    const why = result.kind === "limit" ? "known limit (fails by design, see SECURITY.md)" : "text differs from the chapter's (a failure only with --conformance)";
    return `${open}>\n      <system-out>${text(`${why}\n${detail}`)}</system-out>\n    </testcase>`;
  });
  const counts = `tests="${summary.total}" failures="${summary.failed}" errors="0" skipped="${skipped}" time="${seconds(total)}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="workspace-gates audit" ${counts}>`,
    `  <testsuite name=${attribute(suite)} ${counts}>`,
    "    <properties>",
    ...[
      ["workspace-gates", VERSION],
      ["target", report.target],
      ["seed", String(report.seed)],
      ["runs", String(report.runs)],
      ["conformance", String(report.conformance)],
      ...(report.interrupted === undefined ? [] : [["interrupted", report.interrupted]]),
      ...report.coverage.map((row) => [`tool ${row.tool}`, coverageLine(row)]),
    ].map(([name, value]) => `      <property name=${attribute(name as string)} value=${attribute(value as string)}/>`),
    "    </properties>",
    ...cases,
    "  </testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}

export const SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json";

export function toSarif(report: JsonReport): string {
  const { module } = report;
  const ran = report.results.filter((result) => result.status === "passed" || result.status === "failed");
  const rules = ran.map((result) => ({
    id: result.id,
    name: result.id.replace(/\.(\w)/g, (_dot, letter: string) => letter.toUpperCase()),
    shortDescription: { text: result.title },
    helpUri: "https://www.npmjs.com/package/workspace-gates",
    properties: { gate: result.gate, kind: result.kind },
  }));
  const reported = ran.filter((result) => result.status === "failed" && result.kind !== "limit");
  const results = reported.map((result) => {
    const { replay } = result;
    return {
      ruleId: result.id,
      ruleIndex: ran.indexOf(result),
      level: failsRun(result, report.conformance) ? "error" : "note",
      message: { text: failureText(result) },
      ...(module === undefined ? {} : { locations: [{ physicalLocation: { artifactLocation: { uri: module.replaceAll("\\", "/") } } }] }),
      partialFingerprints: { "workspaceGatesProperty/v1": `${result.id}:${report.target}` },
      properties: {
        kind: result.kind,
        seed: report.seed,
        counterexample: result.counterexample ?? "(none)",
        ...(replay === undefined ? {} : { replay }),
      },
    };
  });
  const log = {
    $schema: SARIF_SCHEMA,
    version: "2.1.0",
    runs: [
      {
        tool: { driver: { name: "workspace-gates", version: VERSION, informationUri: "https://www.npmjs.com/package/workspace-gates", rules } },
        invocations: [{ executionSuccessful: report.interrupted === undefined }],
        results,
        properties: { tools: report.coverage.map((row) => ({ tool: row.tool, plays: row.plays, verdict: row.verdict, why: row.why, attackedBy: row.attackedBy })) },
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
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
    `broken: ${result.reason ?? "(no reason given)"}`,
    `counterexample:\n${result.counterexample ?? "(none)"}`,
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
