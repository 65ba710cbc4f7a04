/**
 * Coverage is part of the verdict: every tool the target offers, with the properties that called it
 * and how often, or why none did; and `coverage.tools`, the rule that no tool taking a path went
 * unattacked.
 *
 * Promises: `judgeCoverage` gives one row per offered tool, in the target's order. A tool that plays
 * an operation is attacked when a property called it in the runs the audit counted; when none did, it
 * fails the rule, unless the run was asked for a part of the audit (`--only`) that leaves out its
 * operation's property, or its property ran out of time (a target too slow for the budget, or
 * `--max-time` reached: `out of time`, and that run gives no verdict at all, audit/command/command.ts). A tool that takes a path no operation fits is attacked generically (`other`,
 * operations/classify.ts) and judged like the rest; one that takes no path, and one the user excluded by name, pass it and are
 * listed with why. A target that offers no tool makes the rule not applicable. A row of a tool that
 * has optional arguments lists each, with the calls that sent it (0: never exercised).
 * Does not promise: that a tool attacked was attacked well; the properties' own verdicts say that.
 */
import { containmentId } from "../operations/catalog.js";
import { weaknessesOf } from "../findings/findings.js";
import type { OfferedTool } from "../operations/surface.js";
import { carriedAs } from "../operations/classify.js";
import type { PropertyResult } from "./runner/run.js";

export const COVERAGE_ID = "coverage.tools";
export const COVERAGE_TITLE = "every tool the target offers that takes a path was attacked";

export type CoverageVerdict = "attacked" | "not attacked" | "not selected" | "out of time" | "takes no path" | "excluded";

export interface CoverageRow {
  tool: string;
  /** The operation it plays (operations/catalog.ts), or `no path`, `excluded`. */
  plays: string;
  /** How the kit came to it (`by name`, `by schema`, `by mapping`, and where its paths go when not in arguments of their own: `paths in each item of \`files\``), or why it plays none. */
  why: string;
  verdict: CoverageVerdict;
  /** Calls of it by each property that made any, in the counted runs. */
  attackedBy: Record<string, number>;
  /** Each optional argument of its input schema, with the calls that sent it (classify.ts); absent when it has none. */
  optional?: Record<string, number>;
}

/** Fails the rule: a tool that takes a path, and that nothing attacked. */
export const failsCoverage = (row: Pick<CoverageRow, "verdict">): boolean => row.verdict === "not attacked";

export function coverageRows(
  offered: readonly OfferedTool[],
  results: readonly Pick<PropertyResult, "id" | "status" | "calls" | "options" | "reason" | "missing" | "shortOfFloor">[],
  only: readonly string[] | undefined,
): CoverageRow[] {
  return offered.map(({ name, classification }) => {
    const attackedBy = Object.fromEntries(results.flatMap((result) => (result.calls[name] ? [[result.id, result.calls[name]] as const] : [])));
    const optionalNames = classification.kind === "operation" ? classification.plan.optional.map((argument) => argument.name) : [];
    const sent = (argument: string) => results.reduce((calls, result) => calls + (result.options?.[name]?.[argument] ?? 0), 0);
    const optional = optionalNames.length === 0 ? {} : { optional: Object.fromEntries(optionalNames.map((argument) => [argument, sent(argument)])) };
    const called = Object.keys(attackedBy).length > 0;
    switch (classification.kind) {
      case "excluded":
        return { tool: name, plays: "excluded", why: classification.why, verdict: "excluded", attackedBy };
      case "no path":
        return { tool: name, plays: "no path", why: classification.why, verdict: "takes no path", attackedBy };
      case "operation": {
        const property = containmentId(classification.operation);
        const carried = carriedAs(classification.plan);
        const plays = { tool: name, plays: classification.operation, why: `by ${classification.by}${carried === undefined ? "" : `, ${carried}`}`, attackedBy, ...optional };
        if (called) return { ...plays, verdict: "attacked" };
        if (only !== undefined && !only.includes(property)) return { ...plays, verdict: "not selected", why: `${plays.why}; ${property} was not selected (--only)` };
        const result = results.find((candidate) => candidate.id === property);
        // Its property ran out of time on a slow target: no verdict stands on that run (command.ts), and no finding either.
        if (result?.shortOfFloor !== undefined) return { ...plays, verdict: "out of time", why: `${plays.why}; ${property} ran out of time before it called it` };
        const because = result === undefined ? `${property} did not run` : `${property} ${result.status}${result.reason === undefined ? "" : `: ${result.reason}`}`;
        return { ...plays, verdict: "not attacked", why: `${plays.why}; ${because}` };
      }
    }
  });
}

/**
 * The coverage of one run from its shards' (each the same tools, in the same order): a tool's calls
 * added up, attacked when any shard attacked it, otherwise as the first shard says.
 */
export function mergeCoverage(shards: readonly (readonly CoverageRow[])[]): CoverageRow[] {
  const [first = []] = shards;
  return first.map((row, position) => {
    const attackedBy: Record<string, number> = {};
    for (const shard of shards) for (const [id, calls] of Object.entries(shard[position]?.attackedBy ?? {})) attackedBy[id] = (attackedBy[id] ?? 0) + calls;
    const optional = row.optional === undefined ? undefined : Object.fromEntries(Object.keys(row.optional).map((argument) => [argument, shards.reduce((calls, shard) => calls + (shard[position]?.optional?.[argument] ?? 0), 0)]));
    const attacked = shards.find((shard) => shard[position]?.verdict === "attacked")?.[position];
    return { ...(attacked ?? row), attackedBy, ...(optional === undefined ? {} : { optional }) };
  });
}

/** The rule's verdict, as a result beside the properties'. */
export function coverageResult(rows: readonly CoverageRow[], seed: number): PropertyResult {
  const common = { id: COVERAGE_ID, gate: "coverage" as const, kind: "guarantee" as const, title: COVERAGE_TITLE, seed, runs: 0, cases: 0, timeMs: 0, calls: {} };
  if (rows.length === 0) return { ...common, status: "not-applicable", reason: "the target offers no tools" };
  const unattacked = rows.filter(failsCoverage);
  if (unattacked.length === 0) return { ...common, status: "passed" };
  return {
    ...common,
    status: "failed",
    // A tool nobody called can be reached by any input the model sends it.
    consequence: "not attacked",
    threat: "the model's input alone",
    weaknesses: weaknessesOf("not attacked", "the model's input alone"),
    reason: `${unattacked.length} tool${unattacked.length === 1 ? "" : "s"} that take${unattacked.length === 1 ? "s" : ""} a path ${unattacked.length === 1 ? "was" : "were"} attacked by nothing: ${unattacked.map((row) => row.tool).join(", ")}`,
    counterexample: unattacked.map((row) => `${row.tool}: ${row.why}`).join("\n"),
  };
}

/** Each row as the text report lists it. */
export function renderCoverage(rows: readonly CoverageRow[]): string[] {
  if (rows.length === 0) return [];
  const width = Math.max(4, ...rows.map((row) => row.tool.length));
  const playsWidth = Math.max("operation".length, ...rows.map((row) => row.plays.length));
  const line = (row: CoverageRow) => {
    const by = Object.entries(row.attackedBy).map(([id, calls]) => `${id} (${calls})`);
    const detail = row.verdict === "attacked" ? `attacked by ${by.join(", ")}` : `${row.verdict === "not attacked" ? "NOT ATTACKED" : row.verdict}: ${row.why}${by.length === 0 ? "" : `; called by ${by.join(", ")}`}`;
    const optional = row.optional === undefined ? "" : `; optional arguments: ${Object.entries(row.optional).map(([argument, calls]) => `${argument} (${calls === 0 ? "never sent" : calls})`).join(", ")}`;
    return `  ${row.tool.padEnd(width)}  ${row.plays.padEnd(playsWidth)}  ${detail}${optional}`;
  };
  return [`coverage: every tool the target offers (calls made, by property)`, `  ${"tool".padEnd(width)}  ${"operation".padEnd(playsWidth)}  verdict`, ...rows.map(line), ""];
}
