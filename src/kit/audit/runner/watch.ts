/**
 * The calls of one case, watched for what keeps them from answering.
 *
 * Promises: `watchCalls` answers a watch whose `ask` passes a call through and counts it pending until
 * it settles. While a call has been pending longer than the target's `releaseAfterMs`, the workspace's
 * FIFOs are released, one round at a time (sandbox/fifos.ts): a call blocked on one answers then, and
 * `waits()` lists each FIFO a round found a reader or a writer waiting on, with the calls that were
 * waiting then, longest first, and what a writer wrote. A call that does not answer within `boundMs`
 * makes `ask` throw a `Hang` (consequence
 * `unavailable`) that names the call and the special files of the case; the call itself goes on, and
 * the sandbox it runs in is not reused (property.ts). The time a call waits for the target to start
 * what serves it (an MCP server: operations/surface.ts, `startingServer`) is left out of its bound.
 * Bounds come from the target's own pace (`paceOf`): its measured call latency, at least the floors
 * below, so a slow target is not taken for a hanging one.
 */
import { Hang } from "./property.js";
import type { AuditTarget } from "../../operations/target.js";
import type { Sandbox } from "../../sandbox/sandbox.js";
import { type StartClock, clockingStarts } from "../../operations/surface.js";
import { releaseFifos } from "../../sandbox/fifos.js";

/** How long calls may take before a case's FIFOs are released, and before a call counts as hung. */
export interface CallPace {
  releaseAfterMs: number;
  boundMs: number;
}

/** A call waits this long before its case's FIFOs are released: a release costs a fraction of a second, and finds nobody waiting on a FIFO that no call opened. */
export const RELEASE_FLOOR_MS = 200;
/** A call that takes longer than this hangs, on any machine, unless the target is slow (`paceOf`). */
export const BOUND_FLOOR_MS = 15_000;

const ROUND_MS = 100;

/** The bounds for a target whose calls take `latencyMs` as a rule (its measured median; 0 when unmeasured). */
export function paceOf(target: Pick<AuditTarget, "latencyMs">): CallPace {
  const latency = target.latencyMs ?? 0;
  return { releaseAfterMs: Math.max(RELEASE_FLOOR_MS, 20 * latency), boundMs: Math.max(BOUND_FLOOR_MS, 100 * latency) };
}

/** A FIFO a release round found waited on. */
export interface Wait {
  fifo: string;
  /** A reader took the notice the round wrote. */
  read: boolean;
  /** What a writer wrote into it. */
  written: string;
  /** The calls pending past `releaseAfterMs` at the round, by the index `ask` was given, longest first. */
  waiting: readonly number[];
}

export interface CallWatch {
  /** `call` made and pending until it settles; `what` names it in a hang, and `index` in a wait and in the hang's violation. */
  ask<T>(what: string, index: number, call: () => Promise<T>): Promise<T>;
  /** Every wait the rounds so far found. */
  waits(): Wait[];
  /**
   * Stops releasing, once the round under way has closed its FIFOs: every case's FIFO is one inode
   * (sandbox.ts), so a round left running would take the next case's notice. The calls still pending
   * go on unwatched.
   */
  stop(): Promise<void>;
}

/** `specials` describes the case's special files, for a hang's message (empty when it has none). */
export function watchCalls(box: Sandbox, pace: CallPace, specials: string): CallWatch {
  const notice = `released by the audit: this call waited on a FIFO ${Math.random()}`;
  const pending = new Set<{ index: number; started: number }>();
  const waits: Wait[] = [];
  let round: Promise<void> | undefined;
  const timer = setInterval(() => {
    const waiting = [...pending].filter(({ started }) => performance.now() - started > pace.releaseAfterMs).sort((one, other) => one.started - other.started);
    if (round !== undefined || waiting.length === 0) return;
    round = releaseFifos(box.root, notice)
      .then((released) => {
        for (const { fifo, read, written } of released) if (read || written !== "") waits.push({ fifo, read, written, waiting: waiting.map(({ index }) => index) });
      })
      .finally(() => {
        round = undefined;
      });
  }, ROUND_MS);
  timer.unref();
  return {
    waits: () => [...waits],
    async stop() {
      clearInterval(timer);
      await round;
    },
    async ask(what, index, call) {
      const started = { index, started: performance.now() };
      const clock: StartClock = { startingSince: undefined, startedMs: 0 };
      // The call's own time: since it was asked, less its waits for a start.
      const ownMs = () => performance.now() - started.started - clock.startedMs - (clock.startingSince === undefined ? 0 : performance.now() - clock.startingSince);
      pending.add(started);
      let bound: NodeJS.Timeout | undefined;
      try {
        return await Promise.race([
          clockingStarts(clock, call),
          new Promise<never>((_resolve, reject) => {
            const check = () => {
              const left = pace.boundMs - ownMs();
              if (left > 0) bound = setTimeout(check, left);
              else reject(new Hang(`${what} did not answer within ${pace.boundMs} ms${specials === "" ? "" : `; the workspace holds ${specials}`}`, "unavailable", index));
            };
            bound = setTimeout(check, pace.boundMs);
          }),
        ]);
      } finally {
        clearTimeout(bound);
        pending.delete(started);
      }
    },
  };
}
