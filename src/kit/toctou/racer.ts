/**
 * The concurrent attacker of race mode, and the kit's only racer: a worker thread that flips the
 * contested name (arena.ts) between its occupant (a real directory) and the symlink to outside, as
 * fast as renames go, while the tools run on the main thread.
 *
 * One flip is two renames (the current occupant to its parking place, the other one into the name), so
 * the name is briefly absent between them: Node has no renameat2(RENAME_EXCHANGE). While it is absent,
 * the write tool's `mkdir -p` may create a fresh directory there; the racer then moves that directory
 * aside (an eviction, counted) and takes the name back.
 *
 * Promises: `startRacer` resolves once the thread is flipping, or rejects (with the thread stopped)
 * when it does not start within 10 s; `stop()` ends the thread, first by asking it to leave its loop
 * and, after 2 s, by terminating it, and resolves only when the thread has exited, so nothing renames
 * in the arena afterwards; calling it again returns the same stats. `swaps` counts completed flips;
 * an unexpected fs error ends the thread and is reported as `failure`.
 * Does not promise: any rate. The thread competes with the tools for this machine's cores.
 *
 * The thread's code is plain CommonJS run with `eval: true` and none of the parent's Node flags, so
 * it starts the same way under tsx, vitest and compiled `dist/`, with no TypeScript loader in the
 * worker and whatever `--input-type` the parent was started with.
 */
import { Worker } from "node:worker_threads";
import type { Arena } from "./arena.js";

export interface RacerStats {
  swaps: number;
  evictions: number;
  runningMs: number;
  /** The error that ended the thread early, or null when it ran until stopped. */
  failure: string | null;
}

export interface Racer {
  readonly threadId: number;
  /** Flips completed so far. */
  swaps(): number;
  /** Set as soon as the thread has died of an error. */
  failure(): string | null;
  stop(): Promise<RacerStats>;
}

const START_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 2_000;
const SWAPS = 0;
const EVICTIONS = 1;

const RACER_SOURCE = `
"use strict";
const { parentPort, workerData } = require("node:worker_threads");
const { renameSync } = require("node:fs");
const { contested, parkedOccupant, parkedLink, evictedPrefix, stopFlag, counters } = workerData;
const stop = new Int32Array(stopFlag);
const count = new BigInt64Array(counters);
// A directory the write tool made while the name was free makes the rename fail with one of these.
const OCCUPIED = new Set(["EISDIR", "ENOTEMPTY", "EEXIST", "ENOTDIR"]);
const MAX_EVICTIONS_PER_MOVE = 100;
let evicted = 0;
function occupy(from) {
  for (let tries = 0; tries < MAX_EVICTIONS_PER_MOVE; tries++) {
    try {
      renameSync(from, contested);
      return;
    } catch (error) {
      if (!OCCUPIED.has(error.code)) throw error;
      renameSync(contested, evictedPrefix + evicted++);
      Atomics.add(count, ${EVICTIONS}, 1n);
    }
  }
  throw new Error("could not take back " + contested + " after " + MAX_EVICTIONS_PER_MOVE + " evictions");
}
parentPort.postMessage("flipping");
while (Atomics.load(stop, 0) === 0) {
  renameSync(contested, parkedOccupant);
  occupy(parkedLink);
  Atomics.add(count, ${SWAPS}, 1n);
  renameSync(contested, parkedLink);
  occupy(parkedOccupant);
  Atomics.add(count, ${SWAPS}, 1n);
}
`;

export async function startRacer(arena: Arena): Promise<Racer> {
  if (arena.occupant === "none") throw new Error("the racer flips an occupant and a symlink; this arena's name has no occupant");
  const { contested, parkedOccupant, parkedLink, evictedPrefix } = arena;
  const stopFlag = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
  const counters = new SharedArrayBuffer(2 * BigInt64Array.BYTES_PER_ELEMENT);
  const stopView = new Int32Array(stopFlag);
  const countView = new BigInt64Array(counters);
  const worker = new Worker(RACER_SOURCE, {
    eval: true,
    // Not the parent's flags: `--input-type=module` would make the eval'd CommonJS source an ES module.
    execArgv: [],
    workerData: { contested, parkedOccupant, parkedLink, evictedPrefix, stopFlag, counters },
  });
  let failure: string | null = null;
  let exited = false;
  const exit = new Promise<void>((resolve) => worker.once("exit", () => {
    exited = true;
    resolve();
  }));
  worker.on("error", (error) => {
    failure = error instanceof Error ? error.message : String(error);
  });

  const started = performance.now();
  let stopped: Promise<RacerStats> | undefined;
  const racer: Racer = {
    threadId: worker.threadId,
    swaps: () => Number(Atomics.load(countView, SWAPS)),
    failure: () => failure,
    stop() {
      stopped ??= (async () => {
        Atomics.store(stopView, 0, 1);
        if (!exited) await settleWithin(exit, STOP_GRACE_MS);
        if (!exited) await worker.terminate();
        await exit;
        return {
          swaps: racer.swaps(),
          evictions: Number(Atomics.load(countView, EVICTIONS)),
          runningMs: performance.now() - started,
          failure,
        };
      })();
      return stopped;
    },
  };

  const flipping = new Promise<void>((resolve, reject) => {
    worker.once("message", () => resolve());
    void exit.then(() => reject(new Error(`the racer thread exited before it started: ${failure ?? "no error reported"}`)));
  });
  const startedInTime = await settleWithin(flipping, START_TIMEOUT_MS).catch(async (error: unknown) => {
    await racer.stop();
    throw error;
  });
  if (!startedInTime) {
    await racer.stop();
    throw new Error(`the racer thread did not start within ${START_TIMEOUT_MS} ms`);
  }
  return racer;
}

/** Waits for `promise` at most `ms`; true when it resolved in time. A rejection propagates. */
async function settleWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
