/**
 * `workspace-gates merge SHARD.json... [--json FILE] [--junit FILE] [--sarif FILE] [--html FILE]`: the verdict of
 * one audit run in shards, with the reports `audit` writes for one run.
 *
 * Promises: the reports must be the shards 1..N of one run (same target, seed, budget, conformance,
 * `--fail-on`, SARIF location, property list and version of the tool), each exactly once and none interrupted; otherwise nothing
 * is merged and the exit code is 2, naming the shard that is missing, repeated or incomplete. A
 * property failed when any shard failed it (the first such shard's counterexample and replay are
 * kept, and every consequence a failing shard showed beside its own in `alsoSeen`), was
 * skipped when every shard skipped it, passed when every shard passed it; its runs and cases are the
 * shards' added up, and the summary is counted again. Exit 1 when a guarantee failed with a
 * consequence the shards' `--fail-on` names (or, with `--conformance`, a text differs), 0 otherwise,
 * as `audit`; 2 when a report cannot be written. The text gives each failure that fails the run with
 * its consequence and threat, as `audit`'s does.
 */
import { readFile, writeFile } from "node:fs/promises";
import { type CliCommand, UsageError, parseCommandArgs } from "../../cli-command.js";
import { type JsonReport, type JsonResult, addedUp, total } from "./report.js";
import { findingsLine } from "./report-text.js";
import { closingLine, failsRun, summarize, verdict } from "./verdict.js";
import { toJUnit, toSarif } from "./report-formats.js";
import { toHtml } from "./report-html.js";
import { COVERAGE_ID, coverageResult, mergeCoverage } from "../coverage.js";
import { legendOf } from "./legend.js";
import type { PropertyResult } from "../runner/run.js";
import { type Consequence, findingLines } from "../../findings/findings.js";

/** Shards that do not make up one run. */
export class MergeError extends Error {}

export function mergeReports(reports: readonly JsonReport[]): JsonReport {
  const [first] = reports;
  if (first === undefined) throw new MergeError("no reports to merge");
  const count = first.shard?.count;
  if (count === undefined) throw new MergeError("the first report is not a shard (it has no shard field)");
  const seen = new Set<number>();
  for (const report of reports) {
    const shard = report.shard;
    if (shard === undefined) throw new MergeError(`a report of ${report.target} is not a shard`);
    if (report.interrupted !== undefined) throw new MergeError(`shard ${shard.index}/${shard.count} was interrupted (${report.interrupted}): its cases did not all run`);
    const differs = (["target", "seed", "runs", "timeSeconds", "conformance", "failOn", "location"] as const).find((field) => String(report[field]) !== String(first[field]));
    if (differs !== undefined) throw new MergeError(`shard ${shard.index}/${shard.count} has another ${differs} (${String(report[differs])}) than shard ${first.shard?.index}/${count} (${String(first[differs])})`);
    // Another version may draw other cases from the same seed, and count them otherwise.
    if (report.tool?.version !== first.tool?.version)
      throw new MergeError(`shard ${shard.index}/${shard.count} was written by workspace-gates ${String(report.tool?.version)}, shard ${first.shard?.index}/${count} by ${String(first.tool?.version)}`);
    if (shard.count !== count) throw new MergeError(`shard ${shard.index}/${shard.count} belongs to a run of ${shard.count} shards, not ${count}`);
    if (seen.has(shard.index)) throw new MergeError(`shard ${shard.index}/${count} is given twice`);
    if (report.results.map((result) => result.id).join() !== first.results.map((result) => result.id).join())
      throw new MergeError(`shard ${shard.index}/${count} ran other properties than shard ${first.shard?.index}/${count}`);
    if (report.coverage.map((row) => row.tool).join() !== first.coverage.map((row) => row.tool).join())
      throw new MergeError(`shard ${shard.index}/${count} audited a target with other tools than shard ${first.shard?.index}/${count}`);
    seen.add(shard.index);
  }
  const missing = Array.from({ length: count }, (_, index) => index + 1).filter((index) => !seen.has(index));
  if (missing.length > 0) throw new MergeError(`missing shard${missing.length > 1 ? "s" : ""} ${missing.map((index) => `${index}/${count}`).join(", ")}`);
  const ordered = [...reports].sort((a, b) => (a.shard?.index ?? 0) - (b.shard?.index ?? 0));
  const { shard: _shard, ...common } = first;
  // Coverage is judged again from the calls of every shard together.
  const coverage = mergeCoverage(ordered.map((report) => report.coverage));
  const judged = coverageResult(coverage, first.seed);
  const results = first.results.map((result, position) =>
    result.id === COVERAGE_ID ? { ...result, ...jsonOf(judged) } : mergeResult(ordered.map((report) => report.results[position] ?? result)),
  );
  const { legend: _legend, ...shared } = common;
  // A shard without a failure has no legend: the merged failures decide it.
  const legend = legendOf(results);
  return { ...shared, coverage, summary: summarize(results, first), ...(legend.length === 0 ? {} : { legend }), results };
}

/** A result's JSON fields (a coverage result has no replay). */
function jsonOf({ seed: _seed, path: _path, missing: _missing, targetTrouble: _trouble, ...fields }: PropertyResult): JsonResult {
  return fields;
}

function mergeResult(shards: readonly JsonResult[]): JsonResult {
  const [first] = shards as [JsonResult, ...JsonResult[]];
  const added = addedUp(shards);
  const failed = shards.find((result) => result.status === "failed");
  if (failed !== undefined) {
    // Another shard's failure may have been an escape: the merge hides none, as one run would not.
    const seen = shards.flatMap((result) => (result.status === "failed" ? [result.consequence, ...(result.alsoSeen ?? [])] : []));
    const alsoSeen = [...new Set(seen)].filter((consequence): consequence is Consequence => consequence !== undefined && consequence !== failed.consequence);
    const { alsoSeen: _own, ...kept } = failed;
    return { ...kept, ...added, ...(alsoSeen.length === 0 ? {} : { alsoSeen }) };
  }
  const statuses = new Set(shards.map((result) => result.status));
  if (statuses.size > 1) throw new MergeError(`${first.id} was ${[...statuses].join(" in some shards and ")} in others`);
  const { counterexample: _counterexample, reason: _reason, replay: _replay, ...passed } = first;
  return { ...passed, ...added };
}

export function renderMerged(report: JsonReport, shards: number): string {
  const header = `${"property".padEnd(28)} ${"verdict".padEnd(12)} ${"runs".padStart(9)} ${"cases".padStart(9)}`;
  const lines = report.results.map((result) => {
    const fails = failsRun(result, report);
    const word = verdict(result, report);
    const detail = fails ? ["", ...findingLines(result), `broken: ${result.reason ?? ""}`, `replay: ${result.replay ?? ""}`].join("\n    ") : "";
    return `${result.id.padEnd(28)} ${word.padEnd(12)} ${String(result.runs).padStart(9)} ${String(result.cases).padStart(9)}${detail}`;
  });
  const findings = findingsLine(report.summary);
  return `${[
    `workspace-gates merge of ${shards} shards: ${report.target} (seed ${report.seed})`,
    "",
    header,
    ...lines,
    "",
    ...(findings === undefined ? [] : [findings]),
    `${closingLine(report.results, report).replace(/^audit:/, "merge:")}, ${total(report.results, "cases")} cases`,
  ].join("\n")}\n`;
}

export const mergeCommand: CliCommand = {
  name: "merge",
  summary: "combine the --json reports of audit shards (--shard K/N) into one verdict",
  synopsis: "workspace-gates merge SHARD.json... [--json FILE] [--junit FILE] [--sarif FILE] [--html FILE]",
  usage: `usage: workspace-gates merge SHARD.json... [--json FILE] [--junit FILE] [--sarif FILE] [--html FILE]

  SHARD.json    the --json reports of every shard of one audit run
  --json FILE   also write the merged report as JSON
  --junit FILE  also write it as JUnit XML, as audit --junit does for one run
  --sarif FILE  also write it as SARIF 2.1.0, as audit --sarif does for one run
  --html FILE   also write it as a page, as audit --html does for one run`,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs({ args: [...argv], allowPositionals: true, options: { json: { type: "string" }, junit: { type: "string" }, sarif: { type: "string" }, html: { type: "string" } } });
    if (positionals.length === 0) throw new UsageError("give the shards' JSON reports");
    let merged: JsonReport;
    try {
      const reports = await Promise.all(positionals.map(async (file) => JSON.parse(await readFile(file, "utf8")) as JsonReport));
      merged = mergeReports(reports);
    } catch (error) {
      io.stderr(`merge: ${error instanceof Error ? error.message : String(error)}\n`);
      return 2;
    }
    io.stdout(renderMerged(merged, positionals.length));
    const outputs = [
      [values.json, () => `${JSON.stringify(merged, null, 2)}\n`],
      [values.junit, () => toJUnit(merged)],
      [values.sarif, () => toSarif(merged)],
      [values.html, () => toHtml(merged)],
    ] as const;
    for (const [file, render] of outputs) {
      if (file === undefined) continue;
      try {
        await writeFile(file, render());
      } catch (error) {
        io.stderr(`merge: cannot write ${file}: ${error instanceof Error ? error.message : String(error)}\n`);
        return 2;
      }
    }
    return merged.summary.failed > 0 ? 1 : 0;
  },
};
