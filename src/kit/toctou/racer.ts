/**
 * The concurrent attacker of race mode, and the kit's only racer: a worker thread that flips each
 * contested name (arena.ts) in turn between its occupant and the symlink to outside, as fast as
 * renames go, while the tools run on the main thread.
 *
 * A directory occupant is flipped in two renames (the current occupant to its parking place, the
 * other one into the name), so the name is briefly absent between them: Node has no
 * renameat2(RENAME_EXCHANGE). While it is absent, the write tool's `mkdir -p` may create a fresh
 * directory there; the racer then moves that directory aside (an eviction, counted) and takes the
 * name back. A file occupant is parked and the link renamed in the same way; on the way back the
 * occupant is renamed over the name, replacing whatever stands there, and a fresh link is made for
 * the next flip. So a target that renames a file of its own over the name (a write by temporary
 * file, which replaces the link itself) cannot stop the flips: its file is overwritten, not parked;
 * and one that removed the file leaves a free name, where a fresh decoy is parked. A directory
 * occupant whose decoy a target moved or removed gets a fresh one while it is parked (a real
 * directory, in the scratch directory: nothing written there can land outside), so a move or a delete
 * that wins on the real directory does not end the race for the calls after it.
 *
 * Promises: `startRacer` resolves once the thread is flipping, or rejects (with the thread stopped)
 * when it does not start within 10 s; `stop()` ends the thread, first by asking it to leave its loop
 * and, after 2 s, by terminating it, and resolves only when the thread has exited, so nothing renames
 * in the arenas afterwards; calling it again returns the same stats. `swaps` counts completed flips
 * of all arenas, `swapsPerArena` those of each; an unexpected fs error ends the thread and is
 * reported as `failure`.
 * Does not promise: any rate. The thread competes with the tools for this machine's cores.
 *
 * The thread's code is plain CommonJS run with `eval: true` and none of the parent's Node flags, so
 * it starts the same way under tsx, vitest and compiled `dist/`, with no TypeScript loader in the
 * worker and whatever `--input-type` the parent was started with.
 */
import { Worker } from "node:worker_threads";
import { type Arena, DECOY } from "./arena.js";

export interface RacerStats {
  swaps: number;
  /** Flips of each arena, in the order `startRacer` was given them; they add up to `swaps`. */
  swapsPerArena: number[];
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
/** Counter of arena i: `FIRST_ARENA + i`. */
const FIRST_ARENA = 2;

const RACER_SOURCE = `
"use strict";
const { parentPort, workerData } = require("node:worker_threads");
const { lstatSync, renameSync, symlinkSync, writeFileSync } = require("node:fs");
const { join } = require("node:path");
const { arenas, decoy, stopFlag, counters } = workerData;
const stop = new Int32Array(stopFlag);
const count = new BigInt64Array(counters);
// A directory the write tool made while the name was free makes the rename fail with one of these.
const OCCUPIED = new Set(["EISDIR", "ENOTEMPTY", "EEXIST", "ENOTDIR"]);
const MAX_EVICTIONS_PER_MOVE = 100;
let evicted = 0;
function occupy(arena, from) {
  for (let tries = 0; tries < MAX_EVICTIONS_PER_MOVE; tries++) {
    try {
      renameSync(from, arena.contested);
      return;
    } catch (error) {
      if (!OCCUPIED.has(error.code)) throw error;
      renameSync(arena.contested, arena.evictedPrefix + evicted++);
      Atomics.add(count, ${EVICTIONS}, 1n);
    }
  }
  throw new Error("could not take back " + arena.contested + " after " + MAX_EVICTIONS_PER_MOVE + " evictions");
}
function flipDirectory(arena, toLink) {
  renameSync(arena.contested, toLink ? arena.parkedOccupant : arena.parkedLink);
  if (toLink) keepDecoy(arena);
  occupy(arena, toLink ? arena.parkedLink : arena.parkedOccupant);
}
// Only into a real directory: what the racer parked is whatever stood at the name.
function keepDecoy(arena) {
  if (!lstatSync(arena.parkedOccupant).isDirectory()) return;
  try {
    writeFileSync(join(arena.parkedOccupant, arena.decoyName), decoy, { flag: "wx" });
  } catch (error) {
    if (error.code !== "EEXIST") throw error;
  }
}
function flipFile(arena, toLink) {
  if (toLink) {
    try {
      renameSync(arena.contested, arena.parkedOccupant);
    } catch (error) {
      // A target that removed the file (to write it anew) left the name free: park a fresh decoy.
      if (error.code !== "ENOENT") throw error;
      writeFileSync(arena.parkedOccupant, decoy);
    }
    renameSync(arena.parkedLink, arena.contested);
  } else {
    renameSync(arena.parkedOccupant, arena.contested);
    symlinkSync(arena.outsideTarget, arena.parkedLink);
  }
}
parentPort.postMessage("flipping");
for (let toLink = true; Atomics.load(stop, 0) === 0; toLink = !toLink) {
  arenas.forEach((arena, index) => {
    (arena.occupant === "directory" ? flipDirectory : flipFile)(arena, toLink);
    Atomics.add(count, ${FIRST_ARENA} + index, 1n);
    Atomics.add(count, ${SWAPS}, 1n);
  });
}
`;

export async function startRacer(arenas: readonly Arena[]): Promise<Racer> {
  if (arenas.length === 0) throw new Error("the racer needs an arena to flip");
  const free = arenas.find((arena) => arena.occupant === "none");
  if (free !== undefined) throw new Error(`the racer flips an occupant and a symlink; ${free.contested} has no occupant`);
  const stopFlag = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
  const counters = new SharedArrayBuffer((FIRST_ARENA + arenas.length) * BigInt64Array.BYTES_PER_ELEMENT);
  const stopView = new Int32Array(stopFlag);
  const countView = new BigInt64Array(counters);
  const worker = new Worker(RACER_SOURCE, {
    eval: true,
    // Not the parent's flags: `--input-type=module` would make the eval'd CommonJS source an ES module.
    execArgv: [],
    workerData: { arenas, decoy: DECOY, stopFlag, counters },
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
          swapsPerArena: arenas.map((_, index) => Number(Atomics.load(countView, FIRST_ARENA + index))),
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
