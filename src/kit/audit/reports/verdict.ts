/**
 * The verdict on each result, the same in every report: whether it fails the run, warns, or was set
 * aside, the word that says so, the counts a CI step branches on, and the closing line that adds the
 * words up.
 *
 * Promises: known limits do not count as failures; conformance (the chapter's exact texts) is counted
 * apart and fails the run only when the audit was asked to (`--conformance`, `--strict`). A
 * guarantee's failure fails the run when its consequence, or one its run also showed, is in the
 * verdict's rule (every escape always is; by default every consequence but a convention's); one that
 * is not is a `warning`. A finding a suppressions file set aside is `suppressed` unless its run also
 * showed a consequence the rule names. The closing line has the form `audit: N passed, N failed, N
 * skipped`, then the count of every other verdict word the rows have (`, N warnings`, `, N suppressed`,
 * `, N not applicable`, …).
 */
import type { PropertyResult } from "../runner/run.js";
import { type Consequence, DEFAULT_FAIL_ON } from "../../findings/findings.js";
import type { Suppression } from "../../findings/suppressions.js";

/** A finding set aside by a suppressions file: why, and until when. */
export type Suppressed = Omit<Suppression, "fingerprint">;

export interface Summary {
  total: number;
  passed: number;
  /** Failures that fail the run: guarantees whose consequence the rule names, and conformance when asked. */
  failed: number;
  /** Guarantees that failed with a consequence the rule leaves out (by default, a convention's). */
  warnings: number;
  /** Failures a suppressions file set aside. */
  suppressed: number;
  skipped: number;
  notApplicable: number;
  /** Properties left short of the runs every verdict needs (too slow to judge, cut at `--max-time`): neither passed nor failed. */
  unjudged: number;
  /** Known limits that failed, as the chapter's design does. */
  knownLimits: number;
  /** Conformance properties whose texts differ from the chapter's (failures only with `--conformance`). */
  conformanceDiffers: number;
  /** Guarantees and texts that failed, by consequence (suppressed ones apart): what a CI step branches on. */
  byConsequence: Partial<Record<Consequence, number>>;
}

/** What fails a run: the consequences of `--fail-on`, and differing texts with `--conformance`. */
export interface VerdictRule {
  conformance: boolean;
  failOn: readonly Consequence[];
}

/** The verdict without `--fail-on` or `--conformance`. */
export const DEFAULT_VERDICT: VerdictRule = { conformance: false, failOn: DEFAULT_FAIL_ON };

type Judged = Pick<PropertyResult, "status" | "kind" | "consequence" | "alsoSeen" | "shortOfFloor"> & { suppressed?: Suppressed };

/**
 * A result that fails the run: a broken guarantee that showed a consequence the rule names (one
 * without a consequence always does), or a text that differs when conformance was asked for. A
 * suppression sets aside the consequence it names; another its run also showed still counts.
 */
export function failsRun(result: Judged, rule: VerdictRule): boolean {
  if (result.status !== "failed") return false;
  if (result.kind === "conformance") return rule.conformance && result.suppressed === undefined;
  if (result.kind === "limit") return false;
  const counted = result.suppressed === undefined ? [result.consequence, ...(result.alsoSeen ?? [])] : (result.alsoSeen ?? []);
  return counted.some((consequence) => consequence === undefined || rule.failOn.includes(consequence));
}

/** A failure a suppressions file set aside, and nothing else its run showed fails the run. */
export const suppressedOnly = (result: Judged, rule: VerdictRule): boolean => result.status === "failed" && result.suppressed !== undefined && !failsRun(result, rule);

/** A guarantee that failed with no consequence the rule names, and no suppression set aside. */
export const warns = (result: Judged, rule: VerdictRule): boolean =>
  result.status === "failed" && result.kind === "guarantee" && result.suppressed === undefined && !failsRun(result, rule);

export function summarize(results: readonly Judged[], rule: VerdictRule): Summary {
  const count = (predicate: (result: Judged) => boolean) => results.filter(predicate).length;
  const byConsequence: Partial<Record<Consequence, number>> = {};
  for (const result of results) {
    if (result.status !== "failed" || result.kind === "limit" || result.suppressed !== undefined) continue;
    const consequence = result.consequence ?? (result.kind === "conformance" ? "wording differs" : "hardening broken");
    byConsequence[consequence] = (byConsequence[consequence] ?? 0) + 1;
  }
  return {
    total: results.length,
    passed: count((result) => result.status === "passed" && result.shortOfFloor === undefined),
    failed: count((result) => failsRun(result, rule)),
    warnings: count((result) => warns(result, rule)),
    suppressed: count((result) => suppressedOnly(result, rule)),
    skipped: count((result) => result.status === "skipped"),
    notApplicable: count((result) => result.status === "not-applicable"),
    unjudged: count((result) => result.status === "passed" && result.shortOfFloor !== undefined),
    knownLimits: count((result) => result.kind === "limit" && result.status === "failed"),
    conformanceDiffers: count((result) => result.kind === "conformance" && result.status === "failed"),
    byConsequence,
  };
}

/** A result's verdict word, the same in every report that shows one (the text's table, the page). */
export function verdict(result: Judged, rule: VerdictRule): string {
  if (result.status === "skipped") return "skipped";
  // Too few runs to say it holds: the line under the row says how many, and what the rest would take.
  if (result.shortOfFloor !== undefined) return result.shortOfFloor.callMs === undefined ? "cut at --max-time" : "too slow to judge";
  if (result.status === "not-applicable") return "not applicable";
  if (result.status === "passed") return result.kind === "limit" ? "passed (limit closed)" : "passed";
  if (result.kind === "limit") return "known limit";
  if (failsRun(result, rule)) return "FAILED";
  if (result.suppressed !== undefined) return "suppressed";
  return result.kind === "conformance" ? "differs" : "warning";
}

/** The verdict words of the closing line, in its order: every row has one (`verdict`), so the counts add up to the rows. */
const CLOSING_WORDS: readonly [word: string, one: string, many: string][] = [
  ["passed", "passed", "passed"],
  ["FAILED", "failed", "failed"],
  ["skipped", "skipped", "skipped"],
  ["warning", "warning", "warnings"],
  ["suppressed", "suppressed", "suppressed"],
  ["too slow to judge", "too slow to judge", "too slow to judge"],
  ["cut at --max-time", "cut at --max-time", "cut at --max-time"],
  ["known limit", "known limit", "known limits"],
  ["passed (limit closed)", "limit closed", "limits closed"],
  ["differs", "text differs", "texts differ"],
  ["not applicable", "not applicable", "not applicable"],
];

/**
 * `audit: N passed, N failed, N skipped`, then the count of every other verdict word the rows have:
 * each row counted once, by the word the table gives it, so the line adds up to the table.
 */
export function closingLine(results: readonly Judged[], rule: VerdictRule): string {
  const words = results.map((result) => verdict(result, rule));
  const counted = CLOSING_WORDS.map(([word, one, many]) => {
    const count = words.filter((shown) => shown === word).length;
    return { count, text: `${count} ${count === 1 ? one : many}`, always: ["passed", "FAILED", "skipped"].includes(word) };
  });
  return `audit: ${counted.filter(({ count, always }) => always || count > 0).map(({ text }) => text).join(", ")}`;
}
