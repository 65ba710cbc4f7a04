/**
 * The time budget of an audit: how the `--time` seconds are shared among the properties
 * (`timeShares`), how one property spends its share (`runWithinTime`), and why no verdict stands on
 * a run that left a property short of its floor (`shortOfFloor`).
 *
 * Promises: a busy machine never judges fewer runs than a quiet one must: every property runs its
 * floor of runs (`DEFAULT_RUNS`, scaled by its `budgetScale`) to its end,
 * however long the machine takes: load stretches the wall time, and only `--max-time`, which the
 * user sets, cuts it (then no verdict stands, and the exit says the cap and the machine's load). A
 * target is too slow to judge only by its own calls: when answering the calls of a property's runs
 * has kept it busy for the whole budget (`targetAllowanceMs`) before the floor was run (the time
 * some call waited on its answer, the audit's own work not counted), the message naming the median
 * time of one call measured before any property ran (pace.ts). The time left in a property's share runs further blocks of
 * runs: past the floor, what a run finds does depend on the time left, so a quiet machine may search
 * further than a busy one, never less far than the floor. Shrinking a failure has a pool of its own, as large as the budget, so a long shrink never
 * takes the time of the properties after it.
 * Does not promise: that the wall time stays within `--time` (the floor runs whatever the load, and
 * each failure's shrink may take up to `shrinkCapMs`); that the target's time is free of the load (a
 * target on a busy machine answers slower too, though the audit's own work no longer counts); that a
 * module's exported functions (`workspacePath`, `isInside`, `runAgent`) count as its time: only its
 * tools' and a server's answers are timed, so a module whose `workspacePath` is slow runs its floor,
 * each run bounded by `--timeout`, the whole by `--max-time`.
 */
import { availableParallelism, loadavg } from "node:os";
import { type Consequence, isConvention } from "../../findings/findings.js";
import type { AuditTarget } from "../../operations/target.js";
import { addedUp } from "../reports/report.js";
import type { AuditProperty } from "../runner/property.js";
import { type PropertyResult, type RunOptions, type ShortOfFloor, runProperty } from "../runner/run.js";
import { SHARD_STRIDE } from "../runner/shard.js";

/** Runs per property with `--runs` and no number; also the floor of the time budget, which the kill matrix holds forks to. */
export const DEFAULT_RUNS = 50;

/**
 * The default budget: what fits, with the 10 s timeout case and start-up, in under a minute on a
 * 2-core machine.
 */
export const DEFAULT_TIME_SECONDS = 40;

/** How many fair shares of the budget the calls of a property's floor may keep the target busy, when that is more than the whole budget. */
export const SLOW_FACTOR = 4;

/**
 * How long the target's answers to one property's floor of runs may take before it is too slow for
 * the budget: the whole budget, or `SLOW_FACTOR` fair shares when that is more (few properties). A
 * property whose calls are costly by nature (bash spawns a shell each) fits in it, on a busy machine too.
 */
export const targetAllowanceMs = (share: Pick<Share, "fairMs" | "totalMs">): number => Math.max(share.totalMs, SLOW_FACTOR * share.fairMs);

/**
 * The `--time` budget among the properties that run and are not capped: each one's share is an equal
 * part of what the ones before it left, so a property done early leaves its time to the rest, and one
 * that overran its share (its floor of runs took longer) takes it from them. `fairMs`, an equal part
 * of the whole, prices what the target's calls may take, whatever the ones before it spent. Shrinking
 * has a pool of its own, shared the same way (`runAudit`).
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

/** What a result took of its runs' share: its time but the shrink's, which is the shrink pool's. */
export const runsTimeMs = (result: Pick<PropertyResult, "timeMs" | "shrinkMs">): number => Math.max(0, result.timeMs - (result.shrinkMs ?? 0));

/**
 * The shares of `totalMs` among `properties` properties, in turn: the runs' from one pool, the
 * shrinks' from another as large (`timeShares` each), so that a long shrink takes no time from the
 * runs of the properties after it; each property's time is `spent` from the pool it was taken from.
 */
export function budgetShares(totalMs: number, properties: number, callMs: number, maxTime: MaxTime | undefined): { next(): Share; spent(result: Pick<PropertyResult, "timeMs" | "shrinkMs">): void } {
  const runs = timeShares(totalMs, properties);
  const shrinks = timeShares(totalMs, properties);
  return {
    next: () => ({ runsMs: runs.next(), fairMs: runs.fairMs, totalMs, shrinkMs: shrinks.next(), callMs, ...(maxTime === undefined ? {} : { maxTime }) }),
    spent(result) {
      runs.spent(runsTimeMs(result));
      shrinks.spent(result.shrinkMs ?? 0);
    },
  };
}

/** `--max-time`: when (`performance.now()`) no further call starts, and the seconds the user gave. */
export interface MaxTime {
  at: number;
  seconds: number;
}

/** One property's part of the budget. */
export interface Share {
  /** How long its runs may go on past the floor: its share of what the properties before it left. */
  runsMs: number;
  /** An equal part of the whole budget, and the budget's size: they price the calls the floor may make. */
  fairMs: number;
  totalMs: number;
  /** How long shrinking a failure may go on past its floor of candidates: its share of the shrink pool. */
  shrinkMs: number;
  /** The median time of one of the target's calls (pace.ts), which a too slow target is named by; 0 for a target without tools. */
  callMs: number;
  maxTime?: MaxTime;
}

/**
 * A time budget that never runs fewer runs than `--runs`' default would: the floor, `floor.runs` from
 * the first run of the share (the kill matrix holds every fork to dying within those), each to its
 * end, then further blocks of as many from the next run of the same stream while the share lasts
 * (a block stops starting runs at the share's end; the run under way goes to its end). The floor is cut
 * only by the target's own pace (no call is made once its answers have taken `targetAllowanceMs`,
 * in the run under way too: `targetBudgetMs`) or by `--max-time`; either leaves the property short of its
 * floor (`shortOfFloor`, saying which), and the verdict then cannot be green. A failure found stands
 * whatever cut the runs after it. A departure from a convention does not stop the blocks: it stays
 * the result unless a later block finds worse.
 */
export async function runWithinTime(property: AuditProperty<unknown>, target: AuditTarget, floor: RunOptions, share: Share): Promise<PropertyResult> {
  const capped = (options: RunOptions): RunOptions => {
    if (share.maxTime === undefined) return options;
    const leftMs = share.maxTime.at - performance.now();
    return { ...options, caseDeadlineMs: Math.min(options.caseDeadlineMs ?? leftMs, leftMs), interruptAfterMs: Math.min(options.interruptAfterMs ?? leftMs, leftMs) };
  };
  const floorRuns = Math.min(floor.runs, property.maxRuns ?? floor.runs);
  let result = await runProperty(property, target, capped({ ...floor, shrinkDeadlineMs: share.shrinkMs, targetBudgetMs: targetAllowanceMs(share) }));
  if (!searchesOn(result)) return result;
  if (result.cutShort === true) return { ...result, shortOfFloor: shortfall(result, floorRuns, share) };
  if (property.maxRuns !== undefined) return result;
  /** The result so far and a further block of runs, one result: a departure already found needs no other one shrunk, a later block looks for worse. */
  const andThen = async (block: Partial<RunOptions>): Promise<PropertyResult> => {
    const departed = result.status === "failed";
    const more = await runProperty(property, target, capped({ ...floor, shrinkDeadlineMs: share.shrinkMs, ...block, ...(departed ? { departures: "note" as const } : {}) }));
    const worse = departed && !searchesOn(more);
    const kept = departed && !worse ? result : more;
    return {
      ...kept,
      ...addedUp([result, more]),
      ...(result.unjudged === undefined && more.unjudged === undefined ? {} : { unjudged: (result.unjudged ?? 0) + (more.unjudged ?? 0) }),
      ...(worse ? { alsoSeen: [...new Set([...(more.alsoSeen ?? []), result.consequence as Consequence])] } : {}),
      ...(result.targetTrouble === undefined ? {} : { targetTrouble: result.targetTrouble }),
      ...(result.shrinkMs === undefined && more.shrinkMs === undefined ? {} : { shrinkMs: (result.shrinkMs ?? 0) + (more.shrinkMs ?? 0) }),
    };
  };
  const first = floor.firstRun ?? 0;
  let next = first + floor.runs;
  while (searchesOn(result) && runsTimeMs(result) < share.runsMs && next < SHARD_STRIDE + first) {
    result = await andThen({ firstRun: next, interruptAfterMs: share.runsMs - runsTimeMs(result) });
    next += floor.runs;
  }
  // The floor was run whole: a block past it that its share's end (or the cap) cut cut nothing a verdict needs.
  const { cutShort: _, outOfTargetTime: __, ...whole } = result;
  return whole;
}

/** Why a property whose floor was cut ran short: its target's own pace, else `--max-time`. */
function shortfall(result: PropertyResult, floorRuns: number, share: Share): ShortOfFloor {
  if (result.outOfTargetTime !== true) return { floorRuns, ...(share.maxTime === undefined ? {} : { maxTimeSeconds: share.maxTime.seconds }) };
  const neededMs = Math.round(((result.targetMs ?? 0) * floorRuns) / Math.max(1, result.runs));
  // The budget whose allowance would hold those calls: the budget itself, or less when SLOW_FACTOR fair shares are more.
  const properties = share.totalMs / share.fairMs;
  const neededTimeSeconds = Math.ceil(neededMs / Math.max(1, SLOW_FACTOR / properties) / 1000);
  return { floorRuns, neededMs, callMs: Math.round(share.callMs * 10) / 10, neededTimeSeconds };
}

/** A result after which the blocks go on: one that passed, or failed only by departing from a convention. */
function searchesOn(result: PropertyResult): boolean {
  return result.status === "passed" || (result.status === "failed" && isConvention(result.consequence) && (result.alsoSeen ?? []).every(isConvention));
}

/**
 * Why no verdict stands on a run that found nothing but left some property short of its floor of
 * runs: the target's pace and the budget that would run every floor, or the cap it reached and the
 * machine's load (the target is not to blame for a cap).
 */
export function shortOfFloor(results: readonly PropertyResult[]): string | undefined {
  const short = results.filter((result) => result.shortOfFloor !== undefined);
  if (short.length === 0) return undefined;
  const slow = short.filter((result) => result.shortOfFloor?.callMs !== undefined);
  const ids = (some: readonly PropertyResult[]) => `${some.length} propert${some.length === 1 ? "y" : "ies"} (${some.map((result) => result.id).join(", ")})`;
  if (slow.length > 0) {
    const callMs = slow[0]?.shortOfFloor?.callMs ?? 0;
    const neededSeconds = Math.max(...slow.map((result) => result.shortOfFloor?.neededTimeSeconds ?? 0));
    return `the target is too slow to judge at this budget: its calls take a median ${callMs} ms, and ${ids(slow)} ran short of the runs every verdict needs, their calls alone needing more than the budget gives; about --time ${neededSeconds} would run them all`;
  }
  const seconds = short[0]?.shortOfFloor?.maxTimeSeconds;
  const [load] = loadavg();
  return `the audit reached --max-time ${seconds ?? "?"} before ${ids(short)} ran the runs every verdict needs; the target's calls were fast enough for this budget, and the machine's load was ${(load ?? 0).toFixed(1)} on ${availableParallelism()} cores: give a larger --max-time, or run it on a quieter machine`;
}
