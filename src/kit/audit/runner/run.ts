/**
 * Runs audit properties against a target and collects one result per property.
 *
 * Promises: a property whose exports are missing is `skipped`; otherwise fast-check runs it with the
 * given seed and budget, and a failure carries the shrunk counterexample (rendered for a reader; under
 * a shrink deadline, the smallest found by then, marked `shrinkStopped`), the
 * reason, and the seed and path that replay exactly that case. A case that does not answer within
 * `timeoutMs` fails as a hang, with that case (unshrunk) as the counterexample, rather than stalling
 * the audit; the sandbox it held is removed when the property is done, and so are the others unless
 * the caller keeps them for its next run. A departure from the chapter's conventions (a failure whose
 * consequence is a convention's) does not end the search: the runs go on, since a later one may show
 * harm, and the departure is the result only when nothing graver failed (then shrunk, and replayable
 * by its path); a graver failure lists it in `alsoSeen`. Shrinking keeps the gravest tier it met
 * (findings.ts): a smaller case of a lesser consequence never becomes the counterexample of an escape.
 * Does not promise: isolation from a target that corrupts process state (a fork that `chdir`s or
 * patches globals affects later properties).
 */
import fc from "fast-check";
import { type AuditProperty, type Gate, type PropertyKind, Hang, Violation, disposeSandboxes, settle } from "./property.js";
import { type Consequence, type Cwe, type Threat, graverTier, isConvention, weaknessesOf } from "../../findings/findings.js";
import { type CallCount, type OptionCount, PastDeadline, type Transcript, addCalls, addOptions, optionsRecord, pastDeadline, recordingCalls, transcribing } from "../../operations/surface.js";
import { type Counterexample, counterexampleOf, renderCounterexample } from "./counterexample.js";
import { pinOutsideChange } from "./pin.js";
import { type AuditTarget, TargetStopped } from "../../operations/target.js";
import { AuditFault, recordAuditFault } from "../../sandbox/fault.js";

export interface RunOptions {
  seed: number;
  runs: number;
  /** Replays one shrunk case (fast-check's counterexample path), with `seed`. */
  path?: string;
  /** Starts at this case of the seed's stream instead of the first (a shard's block, shard.ts). */
  firstRun?: number;
  /**
   * Stop at the first failing case without shrinking it or judging it again without its links (its
   * threat is then what the case itself shows): enough to prove a property catches a bug.
   */
  stopAtFirstFailure?: boolean;
  /** How long one case may take before it counts as a hang (default `DEFAULT_CASE_TIMEOUT_MS`). */
  timeoutMs?: number;
  /**
   * When shrinking a failure may stop, in ms from the failure (its own share, command/budget.ts):
   * past it, once it has tried `SHRINK_FLOOR_CANDIDATES` candidates, and in any case past
   * `shrinkCapMs` of it. The smallest failing case found by then is the counterexample
   * (`shrinkStopped` says so). Unset, shrinking goes to its end (a time budget sets it: over MCP each
   * candidate is a tree of calls, and a long shrink would spend the other properties' time).
   */
  shrinkDeadlineMs?: number;
  /**
   * No further call is made once the target has spent this long answering the calls of this check's
   * runs (the time some call waited on its answer: surface.ts `awaitingTarget`), however long the
   * audit's own work took: what a slow target's floor of runs may take (command/budget.ts). The run
   * under way is cut there as at `caseDeadlineMs` (what its calls so far showed is judged, the rest
   * counted unjudged), no further run starts, and the check says it (`outOfTargetTime`).
   */
  targetBudgetMs?: number;
  /**
   * When a run's case must start no new call, in ms from the start of the run (`--max-time`'s cap:
   * command/budget.ts); the cases it leaves are not counted as judged.
   */
  caseDeadlineMs?: number;
  /**
   * Past this, in ms from the start of the run, no further run starts; the run under way goes to its
   * end (or its `caseDeadlineMs`). A check cut so is never failed by it: only a judged case fails.
   */
  interruptAfterMs?: number;
  /** Called as each case starts, with how many have started (shrinking included). */
  onCase?: (started: number) => void;
  /**
   * Keep the sandboxes that reset cleanly for the next run (and an MCP target's servers on their
   * roots with them); the caller removes them with `disposeSandboxes()` when it is done.
   */
  keepSandboxes?: boolean;
  /**
   * What a departure from a convention does: `search on` (the default) notes the first, goes on with
   * the runs and, when nothing graver failed, shrinks it; `note` goes on too but reports it unshrunk
   * (a later block of a time budget, whose first block shrank one already); `fail` ends the property
   * there as any broken rule does (always so for a replay, `path`, and for `stopAtFirstFailure`).
   */
  departures?: "search on" | "note" | "fail";
}

/**
 * `skipped`: the target lacks an export the property needs (`missing`); `not-applicable`: the property
 * cannot judge this target or platform (`reason`). Neither checked anything.
 */
export type PropertyStatus = "passed" | "failed" | "skipped" | "not-applicable";

export interface PropertyResult {
  id: string;
  gate: Gate;
  kind: PropertyKind;
  title: string;
  status: PropertyStatus;
  /** Generated values checked (a tree and its probes is one run), shrinking not counted. */
  runs: number;
  /** Cases judged in those runs: each probe aimed at a tree is one (`casesIn`), any other run one; of a failed run, the case that broke the rule. */
  cases: number;
  timeMs: number;
  seed: number;
  /** The counterexample as every report prints it. */
  counterexample?: string;
  /** The counterexample as data, when it is a case of calls (counterexample.ts): what JSON carries and a page draws. */
  case?: Counterexample;
  /** Shrinking was stopped at the deadline (`shrinkDeadlineMs`): a smaller case may fail too. */
  shrinkStopped?: true;
  reason?: string;
  /** fast-check's path to the shrunk counterexample, for `--path` replays. */
  path?: string;
  missing?: string[];
  /** What the failure costs (findings.ts): the broken rule's, or the property's own. */
  consequence?: Consequence;
  /**
   * Other consequences that failing cases of this run showed (the first failure, or one met while
   * shrinking): the verdict counts them too, so a case shrunk to a lesser failure hides no escape.
   */
  alsoSeen?: Consequence[];
  /** What an attacker needs for the counterexample. */
  threat?: Threat;
  /** The CWE weaknesses the failure shows: its consequence's, its threat's, the property's own. */
  weaknesses?: Cwe[];
  /** Calls of each of the target's tools, by its own name, in the runs counted above: what the property attacked. */
  calls: Record<string, number>;
  /** Of those calls, per tool, how many sent each of its optional arguments (classify.ts); absent when none did. */
  options?: Record<string, Record<string, number>>;
  /**
   * The target stopped answering in a case and not when the case was done again on a fresh process:
   * its trouble is its own, not the case's, and no verdict of this audit stands on it.
   */
  targetTrouble?: string;
  /** A deadline cut the run short (`caseDeadlineMs`, `interruptAfterMs`, `targetBudgetMs`): a case left cases unjudged, or runs were not started. */
  cutShort?: true;
  /** The runs stopped at `targetBudgetMs`: the target's own answers took what the floor may take. */
  outOfTargetTime?: true;
  /** How long the target took answering the calls of these runs (shrinking not counted). */
  targetMs?: number;
  /** Of `timeMs`, the time spent shrinking the failure and judging its lesser cases: the shrink's share, not the runs'. */
  shrinkMs?: number;
  /** The cases a case left unjudged at its deadline (`caseDeadlineMs`). */
  unjudged?: number;
  /**
   * The property ran short of its floor of runs (command/budget.ts): the runs the floor asks, and why.
   * Either the target is too slow (`callMs`, the median time of one of its calls, and `neededMs`,
   * about how long the floor's calls would keep it busy), or the audit reached `--max-time`
   * (`maxTimeSeconds`) first, whatever the target's pace.
   */
  shortOfFloor?: ShortOfFloor;
}

/** Why a property ran short of its floor of runs (`PropertyResult.shortOfFloor`). */
export interface ShortOfFloor {
  floorRuns: number;
  /** Of a target too slow: about how long the floor's calls would keep it busy, at `callMs` each. */
  neededMs?: number;
  callMs?: number;
  /** Of a target too slow: about the `--time` whose fair share would hold the floor's calls. */
  neededTimeSeconds?: number;
  /** The `--max-time` the audit reached before the floor was run, whatever the target's pace. */
  maxTimeSeconds?: number;
}

/**
 * The shrink candidates a failure always gets, deadline or not: a count, not a time, so that a shrink
 * this short ends where it would without a deadline on every machine and under any load (those of the
 * forks in fixtures/vulnerable and of the official MCP server need fewer, but for a rare long one).
 */
export const SHRINK_FLOOR_CANDIDATES = 200;

/**
 * However few candidates a shrink under a deadline has tried, it stops at this, from the failure:
 * 10 s, or four times its deadline when that is more. Only a shrink whose candidates are slow meets it
 * (a slow server's, where each is a tree of calls); an ordinary one tries its floor well within it.
 * It bounds what one failure adds to the budget (a shrink of 30 s a failure made `--time 10` run 86 s).
 */
export function shrinkCapMs(deadlineMs: number): number {
  return Math.max(10_000, 4 * deadlineMs);
}

// Long enough for a run of sequences.bash on a loaded 2-core machine; short enough that a fork whose
// tool hangs (a FIFO read without O_NONBLOCK) fails instead of stalling the audit.
export const DEFAULT_CASE_TIMEOUT_MS = 60_000;

/** Why a property checks nothing against a target, or undefined when it runs. */
export function notRun(property: AuditProperty<unknown>, target: AuditTarget): { status: "not-applicable"; reason: string } | { status: "skipped"; missing: string[] } | undefined {
  // Before the missing exports: what the target says cannot apply to its kind (a process has no
  // isInside) is not applicable, not skipped.
  const inapplicable = target.notApplicable?.get(property.id);
  if (inapplicable !== undefined) return { status: "not-applicable", reason: inapplicable };
  const missing = property.needs.filter((name) => target[name] === undefined);
  if (missing.length > 0) return { status: "skipped", missing };
  const notApplicable = property.notApplicable?.(target);
  return notApplicable === undefined ? undefined : { status: "not-applicable", reason: notApplicable };
}

export async function runProperty<T>(property: AuditProperty<T>, target: AuditTarget, options: RunOptions): Promise<PropertyResult> {
  const common = { id: property.id, gate: property.gate, kind: property.kind, title: property.title, seed: options.seed };
  const unchecked = notRun(property as AuditProperty<unknown>, target);
  if (unchecked !== undefined) return { ...common, ...unchecked, runs: 0, cases: 0, timeMs: 0, calls: {} };
  const timeoutMs = options.timeoutMs ?? DEFAULT_CASE_TIMEOUT_MS;
  const departures = options.path !== undefined || options.stopAtFirstFailure === true ? "fail" : (options.departures ?? "search on");
  // The first run that departed from a convention, while the search goes on for worse.
  let departure: { run: number; value: T; error: unknown; transcript: Transcript | undefined } | undefined;
  // The consequence of the failure being shrunk, the gravest tier met: a candidate of a lesser tier does not stand in for it.
  let shrinkingFrom: Consequence | undefined;
  let nextRun = options.firstRun ?? 0;
  let started = 0;
  let hung = false;
  // The cases of every run that passed, and of the first that failed the one that broke the rule (it
  // stops there); the shrink candidates after it are not cases of the budget.
  let cases = 0;
  let shrinking = false;
  let shrinkCandidates = 0;
  let shrinkStopped = false;
  let targetTrouble: string | undefined;
  let unjudged = 0;
  // The target's time answering the runs so far (shrinking not counted), for `targetBudgetMs`, and when shrinking began.
  let targetMs = 0;
  let outOfTargetTime = false;
  let shrinkingSince: number | undefined;
  // Runs started (shrink candidates not counted), and whether the interrupt kept later ones from starting.
  let runsStarted = 0;
  let interrupted = false;
  const consequences = new Set<Consequence>();
  const calls: CallCount = new Map();
  const sentOptions: OptionCount = new Map();
  // What the last run of a case made, and of the last case that failed (the counterexample's, once shrinking is done).
  let transcript: Transcript | undefined;
  let failingTranscript: Transcript | undefined;
  const once = async (value: T) => {
    transcript = { sent: [], sandboxes: [] };
    const made = transcript;
    const answer = await settle(withTimeout(transcribing(made, () => property.check(target, value)), timeoutMs));
    if (answer.ok && answer.value === TIMED_OUT) {
      hung = true;
      throw new Violation(`no answer within ${timeoutMs} ms: the call hangs (the case is not shrunk)`, "unavailable");
    }
    if (!answer.ok) {
      // A call that did not answer within its own bound (audit/watch.ts): not shrunk either.
      if (answer.error instanceof Hang) hung = true;
      throw answer.error;
    }
  };
  /**
   * A case, with a target that stops answering judged by doing the case again: the target is then a
   * fresh process (mcp/target.ts), so a case that stops it again stops it by itself, a finding; one
   * that does not leaves the target's own trouble, which no verdict stands on. While shrinking, a stop
   * is taken as a failure: the case shrunk from already stopped a fresh process.
   */
  const judge = async (value: T) => {
    try {
      await once(value);
    } catch (error) {
      if (!(error instanceof TargetStopped)) throw error;
      const again = shrinking ? ({ ok: false, error } as const) : await settle(once(value));
      if (again.ok) {
        // Done again past the case's deadline, it made no call after it: it did not show that the case
        // leaves a fresh process standing, so the case is cut, never the target's own trouble.
        if (pastDeadline()) throw new PastDeadline();
        targetTrouble ??= error.message;
        return;
      }
      if (!(again.error instanceof TargetStopped)) throw again.error;
      // A hang is not shrunk: every smaller case that hangs would wait out the timeout too.
      if (error.how === "hung") hung = true;
      // Calls may have been in flight together: which one stopped it, the case does not say.
      throw new Violation(
        `the target stopped answering (${error.how === "hung" ? "it left a call unanswered" : "its process exited"}) in this case, and again when the case was done on a fresh process: ${error.message}`,
        "unavailable",
        "no single call",
      );
    }
  };
  const predicate = async (value: T) => {
    // After a hang, every shrink candidate would wait out the timeout too: passing them all keeps the
    // case that hung as the counterexample, and its path replays it.
    if (hung) return;
    // Past the floor and the deadline every candidate passes, as after a hang, so the last failing
    // case stays; so does every candidate past the cap, whose candidates are slow (a slow target's).
    if (shrinking && options.shrinkDeadlineMs !== undefined) {
      const elapsed = performance.now() - (shrinkingSince ?? startedAt);
      const pastFloor = ++shrinkCandidates > SHRINK_FLOOR_CANDIDATES && elapsed > options.shrinkDeadlineMs;
      if (pastFloor || elapsed > shrinkCapMs(options.shrinkDeadlineMs)) {
        shrinkStopped = true;
        return;
      }
    }
    // Past the interrupt no further run starts: it is skipped, never judged (fast-check's own
    // interruptAfterTimeLimit abandons the case under way, and calls a check it cut before any run
    // passed failed, with no counterexample).
    if (!shrinking && options.interruptAfterMs !== undefined && performance.now() - startedAt > options.interruptAfterMs) {
      interrupted = true;
      return;
    }
    if (!shrinking && options.targetBudgetMs !== undefined && targetMs >= options.targetBudgetMs) {
      interrupted = outOfTargetTime = true;
      return;
    }
    options.onCase?.(++started);
    const run = nextRun;
    if (!shrinking) {
      nextRun += 1;
      runsStarted += 1;
    }
    const deadline = {
      ...(options.caseDeadlineMs === undefined ? {} : { at: startedAt + options.caseDeadlineMs }),
      // A shrink candidate is the shrink pool's, not the runs' target time.
      ...(options.targetBudgetMs === undefined || shrinking ? {} : { busyMs: options.targetBudgetMs - targetMs }),
    };
    const recorded = await recordingCalls(() => settle(judge(value)), deadline);
    if (!shrinking) {
      targetMs += recorded.busyMs;
      addCalls(calls, recorded.calls);
      addOptions(sentOptions, recorded.options);
    }
    const { answer } = recorded;
    // An error of the audit's own (a sandbox or a tree it could not make) shows nothing of the target:
    // recorded for the command's verdict, and the case counts as not judged.
    if (!answer.ok && answer.error instanceof AuditFault) {
      recordAuditFault(answer.error);
      return;
    }
    // A case cut at its deadline by a call it could no longer make judged nothing more than it had.
    const cut = !answer.ok && answer.error instanceof PastDeadline;
    // The cases it folded onto others were judged by them: a cut leaves the rest, never more.
    const casesIn = Math.max(0, (property.casesIn?.(value) ?? 1) - recorded.folded);
    const left = cut ? casesIn : Math.min(casesIn, recorded.unjudged);
    if (!answer.ok && !cut) {
      const consequence = consequenceOf(answer.error, property.consequence);
      consequences.add(consequence);
      // A candidate of a lesser tier than the failure being shrunk does not stand in for it: a case
      // that only waits on a FIFO, or only departs, never takes the place of an escape.
      if (shrinking && shrinkingFrom !== undefined && graverTier(shrinkingFrom, consequence)) return;
      failingTranscript = transcript;
      if (!shrinking && departures !== "fail" && isConvention(consequence)) {
        // The case was judged to its end (a property settles departures last): its cases count.
        cases += casesIn;
        departure ??= { run, value, error: answer.error, transcript };
        return;
      }
      if (!shrinking) cases += 1;
      shrinking = true;
      shrinkingSince ??= performance.now();
      if (shrinkingFrom === undefined || graverTier(consequence, shrinkingFrom)) shrinkingFrom = consequence;
      throw answer.error;
    }
    if (!shrinking) {
      cases += casesIn - left;
      unjudged += left;
      // Cut at the target's time: the floor was not run, by the target's own pace.
      if (left > 0 && options.targetBudgetMs !== undefined && targetMs >= options.targetBudgetMs) outOfTargetTime = true;
    }
  };
  const startedAt = performance.now();
  const details = await fc
    .check(fc.asyncProperty(property.arbitraryFor?.(target) ?? property.arbitrary, predicate), {
      seed: options.seed,
      numRuns: Math.min(options.runs, property.maxRuns ?? options.runs),
      // A path without `:` makes fast-check start at that case of the stream and run numRuns from there.
      ...(options.path === undefined ? (options.firstRun ? { path: String(options.firstRun) } : {}) : { path: options.path }),
      ...(options.path !== undefined || options.stopAtFirstFailure === true ? { endOnFailure: true } : {}),
    })
    .finally(() => disposeSandboxes({ keepIdle: options.keepSandboxes === true }));
  const timeMs = Math.round(performance.now() - startedAt);
  const counted = {
    // A run the interrupt skipped passed in fast-check's eyes, and is no run here.
    runs: details.failed ? details.numRuns : runsStarted,
    cases,
    timeMs,
    calls: Object.fromEntries(calls),
    ...(sentOptions.size === 0 ? {} : { options: optionsRecord(sentOptions) }),
    ...(targetTrouble === undefined ? {} : { targetTrouble }),
    ...(unjudged > 0 || interrupted ? { cutShort: true as const } : {}),
    ...(outOfTargetTime ? { outOfTargetTime: true as const } : {}),
    ...(targetMs > 0 ? { targetMs: Math.round(targetMs) } : {}),
    ...(unjudged > 0 ? { unjudged } : {}),
  };
  const failure = async (value: T | undefined, seen: unknown, path: string | null, made: Transcript | undefined): Promise<PropertyResult> => {
    // A change outside is named at the call after which it first shows (pin.ts); a hung case is not done again.
    const pinnable = value !== undefined && !hung && seen instanceof Violation && consequenceOf(seen, property.consequence) === "outside changed";
    const bounded = async (attempt: Promise<string[]>) => {
      const answer = await withTimeout(attempt, timeoutMs);
      return answer === TIMED_OUT ? undefined : answer;
    };
    const error = pinnable ? await pinOutsideChange(property, target, value, seen, bounded) : seen;
    const consequence = consequenceOf(error, property.consequence);
    const alsoSeen = [...consequences].filter((seen) => seen !== consequence);
    const since = shrinkingSince ?? performance.now();
    const until = options.shrinkDeadlineMs === undefined ? undefined : since + options.shrinkDeadlineMs;
    const threat = await threatNeeded(property, target, value, consequence, hung || options.stopAtFirstFailure === true ? undefined : timeoutMs, until);
    await disposeSandboxes({ keepIdle: options.keepSandboxes === true });
    const shrinkMs = Math.round(performance.now() - since);
    return {
      ...common,
      status: "failed",
      ...counted,
      timeMs: Math.round(performance.now() - startedAt),
      ...(shrinkMs > 0 ? { shrinkMs } : {}),
      ...shownCounterexample(property, value, made, error),
      ...(shrinkStopped ? { shrinkStopped: true as const } : {}),
      reason: describeFailure(error),
      consequence,
      ...(alsoSeen.length === 0 ? {} : { alsoSeen }),
      threat,
      weaknesses: weaknessesOf(consequence, threat, property.weaknesses),
      ...(path === null ? {} : { path }),
    };
  };
  if (details.failed) return failure(details.counterexample?.[0], details.errorInstance, details.counterexamplePath, failingTranscript);
  if (departure === undefined) return { ...common, status: "passed", ...counted };
  if (departures === "search on") {
    // Nothing graver failed: the departure is the result, shrunk from its own run.
    const shrunk = await runProperty(property, target, { ...options, firstRun: departure.run, runs: 1, departures: "fail" });
    if (shrunk.status === "failed") return { ...shrunk, ...counted, timeMs: counted.timeMs + shrunk.timeMs, shrinkMs: shrunk.timeMs };
  }
  return failure(departure.value, departure.error, String(departure.run), departure.transcript);
}

/**
 * What the failure needs: the least planted of its lesser cases that still fails as gravely, each
 * judged in turn within `timeoutMs` (none when it is undefined: the case hung, and would wait as long
 * again, or the caller stops at the first failure) and, under a time budget, before `until` (a slow
 * target's lesser cases took a minute past a 15 s budget); one the budget leaves unjudged leaves the
 * case's own threat, which is then more than it may need, never less.
 */
async function threatNeeded<T>(property: AuditProperty<T>, target: AuditTarget, value: T | undefined, consequence: Consequence, timeoutMs: number | undefined, until: number | undefined): Promise<Threat> {
  // Without a counterexample (fast-check gave up on skipped cases) nothing shows more than the input.
  if (value === undefined) return "the model's input alone";
  if (timeoutMs === undefined) return property.threat(value);
  for (const lesser of property.lesserCases?.(value) ?? []) {
    const left = until === undefined ? timeoutMs : until - performance.now();
    if (left <= 0) break;
    const again = await settle(withTimeout(property.check(target, lesser), Math.min(timeoutMs, left)));
    if (again.ok && again.value === TIMED_OUT && left < timeoutMs) break;
    // A lesser case that fails only as something less grave (a FIFO's wait, once a link is gone) does not show what the failure needs.
    const failedAs = again.ok ? (again.value === TIMED_OUT ? "unavailable" : undefined) : consequenceOf(again.error, property.consequence);
    if (failedAs !== undefined && !graverTier(consequence, failedAs)) return property.threat(lesser);
  }
  return property.threat(value);
}

const TIMED_OUT = Symbol("timed out");

/** The consequence a failure shows: its violation's, or the property's own. */
const consequenceOf = (error: unknown, own: Consequence): Consequence => (error instanceof Violation && error.consequence !== undefined ? error.consequence : own);

async function withTimeout<R>(promise: Promise<R>, ms: number): Promise<R | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** The counterexample as text, and as data when the property renders a scene of calls. */
function shownCounterexample<T>(property: AuditProperty<T>, value: T | undefined, transcript: Transcript | undefined, error: unknown): Pick<PropertyResult, "counterexample" | "case"> {
  if (value === undefined) return { counterexample: "(none)" };
  const scene = property.render(value);
  if (typeof scene === "string") return { counterexample: scene };
  const example = error instanceof Violation ? counterexampleOf(scene, transcript, error.brokenAt, error.made) : counterexampleOf(scene, transcript, undefined, undefined);
  return { counterexample: renderCounterexample(example), case: example };
}

function describeFailure(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
