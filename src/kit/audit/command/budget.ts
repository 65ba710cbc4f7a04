/**
 * The time budget of an audit: how the `--time` seconds are shared among the properties
 * (`timeShares`), how one property spends its share (`runWithinTime`), and why no verdict stands on
 * a run that left a property short of its floor (`tooSlow`).
 */
import { type Consequence, isConvention } from "../../findings/findings.js";
import type { AuditTarget } from "../../operations/target.js";
import { type AuditReport, addedUp } from "../reports/report.js";
import type { AuditProperty } from "../runner/property.js";
import { type PropertyResult, type RunOptions, runProperty } from "../runner/run.js";
import { SHARD_STRIDE } from "../runner/shard.js";

/** Runs per property with `--runs` and no number; also the floor of the time budget, which the kill matrix holds forks to. */
export const DEFAULT_RUNS = 50;

/**
 * The default budget: what fits, with the 10 s timeout case and start-up, in under a minute on a
 * 2-core machine.
 */
export const DEFAULT_TIME_SECONDS = 40;

/**
 * Why no verdict stands on a run that found nothing but left some property short of its floor of
 * runs (`runWithinTime`): the pace measured, and the budget that would run every floor.
 */
export function tooSlow(report: AuditReport): string | undefined {
  const short = report.results.filter((result) => result.shortOfFloor !== undefined);
  if (short.length === 0) return undefined;
  const unknown = short.filter((result) => result.shortOfFloor?.neededMs === undefined).length;
  const neededMs = report.results.reduce((sum, result) => sum + (result.shortOfFloor === undefined ? result.timeMs : (result.shortOfFloor.neededMs ?? 0)), 0);
  const budget = `${unknown === 0 ? "about" : "more than"} --time ${Math.ceil(neededMs / 1000)} would run ${unknown === 0 ? "them all" : `the ones measured (${unknown} judged nothing before their share ran out)`}`;
  return `the target is too slow to judge at this budget: its calls take a median ${report.time?.latencyMs ?? "?"} ms, and ${short.length} propert${short.length === 1 ? "y" : "ies"} ran short of the runs every verdict needs (${short.map((result) => result.id).join(", ")}); ${budget}`;
}

/**
 * The `--time` budget among the properties that run and are not capped: each one's share is an equal
 * part of what the ones before it left, so a property done early leaves its time to the rest, and one
 * that overran its share (its floor of runs took longer) takes it from them. `fairMs`, an equal part
 * of the whole, is what a property may take to show that its target is too slow, whatever the ones
 * before it spent.
 */
export function timeShares(totalMs: number, properties: number): { next(): number; spent(ms: number): void; readonly fairMs: number } {
  let leftMs = totalMs;
  let left = properties;
  return {
    next: () => leftMs / Math.max(1, left),
    spent(ms) {
      left -= 1;
      leftMs = Math.max(0, leftMs - ms);
    },
    fairMs: totalMs / Math.max(1, properties),
  };
}

/** How many shares a property's floor of runs may take before the target counts as too slow for it. */
export const SLOW_FACTOR = 4;

/**
 * A time budget that never runs fewer runs than `--runs`' default would on a target that can run
 * them: first one run, which tells what the floor costs; then, when the floor fits in `SLOW_FACTOR`
 * shares, exactly the rest of `floor.runs` (the kill matrix holds every fork to dying within those,
 * whatever the machine's speed), then further blocks of as many, from the next run of the same
 * stream, while time is left. Every run of a block goes to its end: none is abandoned to go on beside
 * the next property. On a target too slow for its floor (the first run alone outlasts the share, or
 * the floor would outlast `SLOW_FACTOR` shares), the property runs what fits in its share, the cases
 * cut at its end; when the runs done price the rest of the floor within `SLOW_FACTOR` shares (the first
 * run was only cold), the rest is run, else it says so (`shortOfFloor`, with about how long the floor
 * would take): the verdict then cannot be green. A failure shrinks until the share is spent (but for its first
 * `SHRINK_FLOOR_CANDIDATES`), so a property that fails over a slow target does not take the others'
 * time to shrink. A departure from a convention does not stop the blocks: it stays the result unless
 * a later block finds worse.
 */
export async function runWithinTime(property: AuditProperty<unknown>, target: AuditTarget, floor: RunOptions, timeLimitMs: number, fairMs: number): Promise<PropertyResult> {
  // A run that outlasts a fair share of the budget (but for what it waits on purpose) is too slow for
  // any floor; a share that the properties before spent early takes no time from this test.
  const slowShareMs = Math.max(timeLimitMs, fairMs);
  const deadlineMs = slowShareMs + (property.waitsMs ?? 0);
  const short = (result: PropertyResult, floorRuns: number): PropertyResult =>
    searchesOn(result) ? { ...result, shortOfFloor: { floorRuns, ...(result.cases === 0 ? {} : { neededMs: Math.round(estimatedRunMs(result) * floorRuns) }) } } : result;
  if (property.maxRuns !== undefined) {
    const capped = await runProperty(property, target, { ...floor, shrinkDeadlineMs: timeLimitMs, caseDeadlineMs: deadlineMs });
    return capped.cutShort === true ? short(capped, Math.min(floor.runs, property.maxRuns)) : capped;
  }
  const first = floor.firstRun ?? 0;
  let result = await runProperty(property, target, { ...floor, runs: 1, shrinkDeadlineMs: timeLimitMs, caseDeadlineMs: deadlineMs });
  if (!searchesOn(result)) return result;
  /** The result so far and a further block of runs, one result: a departure already found needs no other one shrunk, a later block looks for worse. */
  const andThen = async (block: Partial<RunOptions>): Promise<PropertyResult> => {
    const departed = result.status === "failed";
    const more = await runProperty(property, target, { ...floor, ...block, ...(departed ? { departures: "note" as const } : {}) });
    const worse = departed && !searchesOn(more);
    const kept = departed && !worse ? result : more;
    return {
      ...kept,
      ...addedUp([result, more]),
      ...cut(result, more),
      ...(worse ? { alsoSeen: [...new Set([...(more.alsoSeen ?? []), result.consequence as Consequence])] } : {}),
      ...(result.targetTrouble === undefined ? {} : { targetTrouble: result.targetTrouble }),
    };
  };
  const floorMs = estimatedRunMs(result) * floor.runs;
  if (result.cutShort === true || floorMs > slowShareMs * SLOW_FACTOR) {
    const leftMs = slowShareMs - result.timeMs;
    const firstTry = result;
    if (result.cutShort !== true && leftMs > 0 && floor.runs > 1)
      result = await andThen({ runs: floor.runs - 1, firstRun: first + 1, shrinkDeadlineMs: leftMs, caseDeadlineMs: leftMs, interruptAfterMs: leftMs });
    // A first run pays for what the later ones find ready (a cache warmed, code compiled): the runs the
    // share ran after it price the rest of the floor better, and when it fits in the slow shares it is
    // run, the run the share's end cut done again whole.
    const restMs = slowShareMs * SLOW_FACTOR - result.timeMs;
    const whole = wholeRuns(result) ? result.runs : result.runs - 1;
    const afterFirst = { ...result, timeMs: result.timeMs - firstTry.timeMs, runs: result.runs - 1, cases: result.cases - firstTry.cases };
    if (searchesOn(result) && afterFirst.runs > 0 && whole < floor.runs && estimatedRunMs(afterFirst) * (floor.runs - whole) <= restMs) {
      const share = result;
      result = await andThen({ runs: floor.runs - whole, firstRun: first + whole, shrinkDeadlineMs: restMs, caseDeadlineMs: restMs, interruptAfterMs: restMs });
      if (whole < share.runs) result = redoneOnce(result, share.unjudged ?? 0);
    }
    return searchesOn(result) && wholeRuns(result) && result.runs >= floor.runs ? withoutCut(result) : short(result, floor.runs);
  }
  if (floor.runs > 1) result = await andThen({ runs: floor.runs - 1, firstRun: first + 1, shrinkDeadlineMs: timeLimitMs - result.timeMs });
  let next = first + floor.runs;
  while (searchesOn(result) && result.timeMs < timeLimitMs && next < SHARD_STRIDE + first) {
    result = await andThen({ firstRun: next, shrinkDeadlineMs: timeLimitMs - result.timeMs });
    next += floor.runs;
  }
  return result;
}

/** A result after which the blocks go on: one that passed, or failed only by departing from a convention. */
function searchesOn(result: PropertyResult): boolean {
  return result.status === "passed" || (result.status === "failed" && isConvention(result.consequence) && (result.alsoSeen ?? []).every(isConvention));
}

/**
 * What one whole run of a result took, counting what its cut cases left unjudged at the pace of the
 * cases judged; a run that judged nothing took at least its time (the estimate is then a floor).
 */
function estimatedRunMs(result: PropertyResult): number {
  const judgedShare = result.cases === 0 ? 1 : result.cases / (result.cases + (result.unjudged ?? 0));
  return result.timeMs / Math.max(1, result.runs) / judgedShare;
}

/** Whether every case of a result's runs was judged (a deadline may still have kept later runs from starting). */
const wholeRuns = (result: PropertyResult) => (result.unjudged ?? 0) === 0;

/** A result whose cut run was done again whole: counted once, and none of its first try's cases left unjudged. */
function redoneOnce(result: PropertyResult, firstTryUnjudged: number): PropertyResult {
  const unjudged = (result.unjudged ?? 0) - firstTryUnjudged;
  const { unjudged: _, ...rest } = result;
  return { ...rest, runs: result.runs - 1, ...(unjudged > 0 ? { unjudged } : {}) };
}

/** A result whose runs reached their floor, every case judged: a deadline that stopped later runs cut nothing a verdict needs. */
function withoutCut({ cutShort: _, ...whole }: PropertyResult): PropertyResult {
  return whole;
}

/** Whether either part was cut short, with the cases both left unjudged. */
function cut(one: PropertyResult, other: PropertyResult): Pick<PropertyResult, "cutShort" | "unjudged"> {
  const unjudged = (one.unjudged ?? 0) + (other.unjudged ?? 0);
  return { ...(one.cutShort === true || other.cutShort === true ? { cutShort: true as const } : {}), ...(unjudged > 0 ? { unjudged } : {}) };
}
