/**
 * The audit for programs: the JSON report (`JSON_SCHEMA_VERSION`) carries the tool's name and version,
 * the summary counts and every result with its replay command, its fingerprint and where it points.
 * `merge`, JUnit, SARIF and the HTML page are written from it.
 */
import { VERSION } from "../../version.js";
import { legendOf } from "./legend.js";
import { type AuditReport, JSON_SCHEMA_VERSION, type JsonReport, type ReplayPrefix, type TargetWords, fingerprintOf, replayCommand, targetModule } from "./report.js";
import { summarize } from "./verdict.js";

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
