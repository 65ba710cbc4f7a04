/**
 * Comparing an audit with a baseline (a JSON report written by `--json`, such as the reference's
 * committed `fixtures/baseline.json`): what a fork newly fails and what it newly passes.
 *
 * Promises: a regression is a property the baseline passed and this run failed (a guarantee broken,
 * or a known limit a fork had closed and reopened) or skipped (a missing export checks nothing, so it
 * cannot keep what the baseline held); a property that failed in both is not one, so a
 * fork is not blamed for the chapter's own limits. Conformance (wording) counts only when asked
 * (`--conformance`); a property not applicable here is no regression, nor a failure a suppressions
 * file set aside. A baseline that is not a JSON
 * report of this shape is refused with a clear error.
 */
import { readFile } from "node:fs/promises";
import type { JsonReport } from "./report.js";
import type { PropertyResult } from "../runner/run.js";

export interface BaselineComparison {
  baseline: string;
  regressions: string[];
  newlyPassing: string[];
  /** Properties this run has and the baseline does not (added since it was written). */
  notInBaseline: string[];
}

export async function readBaseline(file: string): Promise<Map<string, PropertyResult["status"]>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new Error(`cannot read baseline ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const results = (parsed as Partial<JsonReport> | null)?.results;
  if (!Array.isArray(results) || !results.every((result) => typeof result?.id === "string" && typeof result?.status === "string"))
    throw new Error(`baseline ${file} is not an audit JSON report (no results with id and status)`);
  return new Map(results.map((result) => [result.id, result.status]));
}

export function compareWithBaseline(
  file: string,
  baseline: ReadonlyMap<string, PropertyResult["status"]>,
  results: readonly (PropertyResult & { suppressed?: object })[],
  conformance: boolean,
): BaselineComparison {
  const comparison: BaselineComparison = { baseline: file, regressions: [], newlyPassing: [], notInBaseline: [] };
  for (const result of results) {
    const before = baseline.get(result.id);
    if (before === undefined) comparison.notInBaseline.push(result.id);
    else if (result.kind === "conformance" && !conformance) continue;
    else if (before === "passed" && ((result.status === "failed" && result.suppressed === undefined) || result.status === "skipped")) comparison.regressions.push(result.id);
    else if (before === "failed" && result.status === "passed") comparison.newlyPassing.push(result.id);
  }
  return comparison;
}

export function renderComparison(comparison: BaselineComparison): string {
  const list = (ids: string[]) => (ids.length === 0 ? "none" : ids.join(", "));
  return [
    `against baseline ${comparison.baseline}:`,
    `  regressions (passed there, failed or skipped here): ${list(comparison.regressions)}`,
    `  newly passing (failed there, pass here): ${list(comparison.newlyPassing)}`,
    ...(comparison.notInBaseline.length === 0 ? [] : [`  not in the baseline: ${list(comparison.notInBaseline)}`]),
    "",
  ].join("\n");
}
