/**
 * The model of an audit that every report renders: the run (`AuditReport`, what the command and the
 * runner produced) and its JSON form (`JsonReport`, what `merge`, JUnit, SARIF and the page read), the
 * command that replays a failure, the fingerprint a suppressions file names it by, and the counts of
 * several runs added up. The verdict on a result is verdict.ts's; each reader's rendering sits beside
 * this file: text (report-text.ts), JSON (report-json.ts), JUnit and SARIF (report-formats.ts), HTML
 * (report-html.ts).
 */
import type { PropertyResult, ShortOfFloor } from "../runner/run.js";
import { shellWord } from "../../shell-word.js";
import type { Counterexample } from "../runner/counterexample.js";
import type { Located } from "./located.js";
import type { Shard } from "../runner/shard.js";
import { COVERAGE_ID, type CoverageRow } from "../coverage.js";
import type { Consequence, Cwe, Threat } from "../../findings/findings.js";
import { findingFingerprint } from "../../findings/sarif.js";
import { type SuppressionOutcome, type SuppressionsFile, judgeSuppressions } from "../../findings/suppressions.js";
import { type CallCount, type OptionCount, addCalls, addOptions, optionsFrom, optionsRecord } from "../../operations/surface.js";
import type { Summary, Suppressed } from "./verdict.js";

/** Bumped when a field of the JSON report changes meaning or goes away (adding one does not). */
export const JSON_SCHEMA_VERSION = 3;

/** What a report says of a counterexample whose shrinking the deadline stopped (`shrinkStopped`). */
export const SHRINK_STOPPED = "shrinking stopped at the time budget's deadline: a smaller case may fail too";

export interface AuditReport {
  target: string;
  seed: number;
  /** Cases per property asked for; 0 under a time budget. */
  runs: number;
  /** The time budget shared by the properties, when the budget was time. */
  timeSeconds?: number;
  /** The block of cases this run took, when it is one shard of several (shard.ts). */
  shard?: Shard;
  results: AuditResult[];
  /** Conformance failures fail the run (`--conformance`). */
  conformance: boolean;
  /** The consequences whose guarantee failures fail the run (`--fail-on`, the escapes always among them). */
  failOn: readonly Consequence[];
  /** The file every SARIF result points at (sarif.ts, `findingsFile`). */
  location: string;
  /** Set when the run stopped before every property ran (Ctrl-C): what stopped it. */
  interrupted?: string;
  /** Every tool the target offers, attacked or not (coverage.ts); its verdict is the `coverage.tools` result. */
  coverage: CoverageRow[];
  /** What the entries of `--suppressions` did to this run's findings. */
  suppressions?: SuppressionOutcome;
  /** Where the time went beside the properties: the target's pace (audit/pace.ts), and a server target's starts. */
  time?: AuditTime;
  /** Each failure's line in `location` (located.ts), by result id. */
  located?: Record<string, Located>;
}

export interface AuditTime {
  /** From the command's start to its report: loading the target, starting servers, the properties. */
  totalMs: number;
  /** The median time one call of the target's read tool took, measured before the properties ran. */
  latencyMs: number;
  /** The servers started (an MCP target: one per root) and how long their starts took together. */
  serverStarts?: { count: number; ms: number };
}

/** A property's result as reports show it: what the run found, and whether a suppression set it aside. */
export type AuditResult = PropertyResult & { suppressed?: Suppressed };

export interface JsonReport {
  schemaVersion: number;
  tool: { name: "workspace-gates"; version: string };
  target: string;
  seed: number;
  runs: number;
  timeSeconds?: number;
  shard?: Shard;
  conformance: boolean;
  failOn: readonly Consequence[];
  interrupted?: string;
  /** The module under audit, when the target is one (an MCP server has no file to point at). */
  module?: string;
  /** The file every SARIF result points at. */
  location: string;
  summary: Summary;
  /** Every tool the target offers: what it plays, which properties called it and how often, or why none did. */
  coverage: CoverageRow[];
  time?: AuditTime;
  suppressions?: SuppressionOutcome;
  /** What the terms the failures use stand for (legend.ts), a line each; absent when they use none. */
  legend?: string[];
  results: {
    id: string;
    gate: string;
    kind: PropertyResult["kind"];
    title: string;
    status: PropertyResult["status"];
    runs: number;
    cases: number;
    timeMs: number;
    /** Calls of each of the target's tools, by its own name. */
    calls: Record<string, number>;
    /** Of those calls, per tool, how many sent each optional argument. */
    options?: Record<string, Record<string, number>>;
    consequence?: Consequence;
    alsoSeen?: Consequence[];
    threat?: Threat;
    weaknesses?: Cwe[];
    counterexample?: string;
    /** The counterexample as data, when it is a case of calls (counterexample.ts). */
    case?: Counterexample;
    /** The line of `location` a SARIF result points at, and the name found there (located.ts). */
    located?: Located;
    shrinkStopped?: true;
    reason?: string;
    missing?: string[];
    replay?: string;
    /** The property ran short of its floor of runs: the target is too slow for this budget. */
    shortOfFloor?: ShortOfFloor;
    /** Of a failure: what a suppressions file names it by (the target, the rule, the consequence). */
    fingerprint?: string;
    suppressed?: Suppressed;
  }[];
}

export type JsonResult = JsonReport["results"][number];

/** How to run the audit again, e.g. `npx workspace-gates audit` or `npm run audit --`. */
export type ReplayPrefix = string;

/** The words that name the target on the command line: `[]`, `[MODULE]`, or `--mcp … -- COMMAND…`, with `--protect PATTERNS` before any `--`. */
export type TargetWords = readonly string[];

/** The module under audit, when the target is one (an MCP server has no file to point at). */
export function targetModule(target: TargetWords): string | undefined {
  // The module is the first word, before any flag of the target (`--protect`); a server's words start with `--mcp`.
  const [first] = target;
  return first !== undefined && !first.startsWith("--") ? first : undefined;
}

export function replayCommand(prefix: ReplayPrefix, target: TargetWords, result: PropertyResult): string | undefined {
  // Coverage is judged from the whole run: no one case replays it.
  if (result.status !== "failed" || result.id === COVERAGE_ID) return undefined;
  // Whatever follows `--` belongs to the server's command, so it ends the line.
  const cut = target.includes("--") ? target.indexOf("--") : target.length;
  const parts = [...target.slice(0, cut), "--only", result.id, "--seed", String(result.seed)];
  if (result.path !== undefined) parts.push("--path", result.path);
  return [prefix, ...[...parts, ...target.slice(cut)].map(shellWord)].join(" ");
}

/** What a suppressions file names a failure by: its target, its rule and its consequence. */
export function fingerprintOf(target: string, result: Pick<PropertyResult, "id" | "status" | "kind" | "consequence">): string | undefined {
  if (result.status !== "failed" || result.kind === "limit") return undefined;
  return findingFingerprint(target, result.id, result.consequence ?? (result.kind === "conformance" ? "wording differs" : "hardening broken"));
}

/**
 * The report with the entries of a suppressions file judged against its failures on `day`: each
 * failure an entry applies to carries the entry's reason (and date), and the report what every
 * entry did.
 */
export function withSuppressions(report: AuditReport, file: SuppressionsFile, day: string): AuditReport {
  const findings = report.results.flatMap((result) => {
    const fingerprint = fingerprintOf(report.target, result);
    return fingerprint === undefined || result.consequence === undefined ? [] : [{ fingerprint, consequence: result.consequence }];
  });
  return { ...report, results: report.results.map((result) => withSuppression(result, report.target, file, day)), suppressions: judgeSuppressions(file, findings, day) };
}

/** One result with what the file's entries do to it: set aside, with the reason and the date, when one applies. */
export function withSuppression(result: PropertyResult, target: string, file: SuppressionsFile, day: string): AuditResult {
  const fingerprint = fingerprintOf(target, result);
  if (fingerprint === undefined || result.consequence === undefined) return result;
  const entry = judgeSuppressions(file, [{ fingerprint, consequence: result.consequence }], day).applied.find((applied) => applied.fingerprint === fingerprint);
  if (entry === undefined) return result;
  const { fingerprint: _fingerprint, ...suppressed } = entry;
  return { ...result, suppressed };
}

/** A count of every result added up: the runs, cases or milliseconds of properties, or of shards. */
export function total<Field extends "runs" | "cases" | "timeMs">(results: readonly Pick<PropertyResult, Field>[], field: Field): number {
  return results.reduce((sum, result) => sum + result[field], 0);
}

type Counted = Pick<PropertyResult, "runs" | "cases" | "timeMs" | "calls" | "options">;

/** What several parts of one property's run did together (time-budget blocks, shards): runs, cases, time, calls and optional arguments, added up. */
export function addedUp(parts: readonly Counted[]): Counted {
  const calls: CallCount = new Map();
  const options: OptionCount = new Map();
  for (const part of parts) {
    addCalls(calls, new Map(Object.entries(part.calls)));
    addOptions(options, optionsFrom(part.options ?? {}));
  }
  return {
    runs: total(parts, "runs"),
    cases: total(parts, "cases"),
    timeMs: total(parts, "timeMs"),
    calls: Object.fromEntries(calls),
    ...(options.size === 0 ? {} : { options: optionsRecord(options) }),
  };
}
