/**
 * Where, in the file a SARIF result points at (the module under audit, or the MCP mapping file), a
 * failure is written: the line that names what failed.
 *
 * Promises: for each failed result, the names sought, in order: the tool (or export) of the call the
 * rule broke at, the others its counterexample called, the tools coverage found unattacked, then the
 * exports its property needs; `line` is the first line of the file that names one of them
 * (findings/sarif.ts, `lineNaming`), with the name it found there, or 1, without a name, when no line
 * names any (or the file cannot be read), so a report can say so.
 */
import { readFile } from "node:fs/promises";
import { type Named, lineNaming } from "../../findings/sarif.js";
import { CONTRACT_EXPORTS, type ContractExport } from "../../operations/target.js";
import { COVERAGE_ID, type CoverageRow, failsCoverage } from "../coverage.js";
import { PROPERTIES } from "../properties/index.js";
import type { PropertyResult } from "../runner/run.js";

/** A failure's line in the file its SARIF result points at. */
export interface Located {
  line: number;
  /** The tool or export named on that line; absent when no line names any, and `line` is 1. */
  names?: string;
  /** What was sought, in order. */
  looked: string[];
}

/** The line of `location` that names each failed result, by its id. */
export async function locateFailures(results: readonly PropertyResult[], coverage: readonly CoverageRow[], location: string): Promise<Record<string, Located>> {
  const text = await readFile(location, "utf8").catch(() => "");
  return Object.fromEntries(
    results
      .filter((result) => result.status === "failed")
      .map((result) => {
        const sought = soughtFor(result, coverage);
        const found = lineNaming(text, sought);
        const looked = sought.map((named) => named.name);
        return [result.id, found === undefined ? { line: 1, looked } : { line: found.line, names: found.name, looked }];
      }),
  );
}

function soughtFor(result: PropertyResult, coverage: readonly CoverageRow[]): Named[] {
  const calls = result.case?.calls ?? [];
  const broke = result.case?.broke === undefined ? [] : [calls[result.case.broke - 1]?.subject];
  const unattacked = result.id === COVERAGE_ID ? coverage.filter(failsCoverage).map((row) => row.tool) : [];
  const needs = PROPERTIES.find((property) => property.id === result.id)?.needs ?? [];
  const names = [...new Set([...broke, ...calls.map((call) => call.subject), ...unattacked, ...needs])].filter((name): name is string => name !== undefined);
  return names.map((name) => ({ name, kind: CONTRACT_EXPORTS.includes(name as ContractExport) ? "export" : "tool" }));
}
