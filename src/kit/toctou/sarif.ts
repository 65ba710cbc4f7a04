/**
 * The TOCTOU demonstration as SARIF (`--sarif FILE`), for code scanning as the audit writes it
 * (findings/sarif.ts): an escape is a result.
 *
 * Promises: one rule per tool call the run made (a deterministic scenario's tool, a race operation)
 * and one for the outside; one result, level `error`, per finding of the run (`toctouFindings`: each
 * call that escaped, with the consequence of the catalogue's oracle its evidence broke (a read that
 * returned the canary is `outside read`, a listing that named it `outside revealed`, anything that
 * landed, made, took or removed something outside `outside changed`), and one when anything outside
 * changed, each with the threat `a concurrent process`). A run with no
 * escape has no result, which proves nothing: it is a race. The control race is the chapter's
 * tools, not the target's, and has none.
 */
import { findingLines } from "../findings/findings.js";
import { type SarifResult, type SarifRule, toSarifLog } from "../findings/sarif.js";
import type { DeterministicReport } from "./deterministic.js";
import { RACE_OPERATIONS, type RaceReport, raceOperationTool } from "./race.js";
import { OUTSIDE_RULE, toctouFindings } from "./report.js";

export function toctouSarif(report: DeterministicReport | RaceReport, location: string): string {
  const calls =
    report.mode === "deterministic"
      ? report.scenarios.map((scenario) => ({ ruleId: `toctou.${scenario.tool}`, tool: scenario.tool, does: `${scenario.tool} ${JSON.stringify(scenario.input.path)}, its directory swapped for a symlink to outside right after the check` }))
      : RACE_OPERATIONS.filter((operation) => report.perOperation[operation] !== undefined).map((operation) => ({
          ruleId: `toctou.${operation}`,
          tool: raceOperationTool(operation),
          does: `${operation} while a racer thread swaps ${operation.endsWith(".leaf") ? "the file" : "a directory on its path"} for a symlink to outside`,
        }));
  const escapes = toctouFindings(report);
  const rules: SarifRule[] = [...calls, { ruleId: OUTSIDE_RULE, tool: "any", does: "the run, which changes nothing outside the workspace" }].map((call) => {
    const escape = escapes.find((candidate) => candidate.rule === call.ruleId);
    return {
      id: call.ruleId,
      name: call.ruleId.replace(/\.(\w)/g, (_dot, letter: string) => letter.toUpperCase()),
      title: `no escape: ${call.does}`,
      description: `A check-then-use (TOCTOU) window of the ${call.tool} tool: ${call.does} must neither read nor change anything outside the workspace.`,
      help: "docs/toctou.md of workspace-gates says how the demonstration swaps and what counts as an escape; the verified tools close the window.",
      tags: ["toctou", report.mode],
      ...(escape === undefined ? {} : { finding: { consequence: escape.consequence, weaknesses: escape.weaknesses } }),
    };
  });
  const results = escapes.map(
    (escape): SarifResult => ({
      ruleId: escape.rule,
      level: "error",
      message: [`${escape.rule}: ${escape.what}`, ...findingLines(escape), "evidence:", ...escape.evidence.map((line) => `  ${line}`)].join("\n"),
      consequence: escape.consequence,
      threat: escape.threat,
      weaknesses: escape.weaknesses,
      target: report.tools,
      properties: { mode: report.mode },
    }),
  );
  const interrupted = report.mode === "deterministic" ? report.interrupted : report.stoppedBy === "interrupted";
  return toSarifLog({ rules, results, location, executionSuccessful: !interrupted });
}
