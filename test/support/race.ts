// Runs read and write calls against a racer that flips a workspace directory and a symlink to
// outside in another thread, and counts what each call saw. Bounded by `durationMs` and by a guard
// on the racer's stop, so it cannot hang.
import { lstat } from "node:fs/promises";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { SECRET, type Sandbox } from "../../src/audit/sandbox.js";
import type { Tool, ToolResult } from "../../src/tool.js";

export interface CallTally {
  calls: number;
  /** Reads that returned the inside file, writes that reported success. */
  done: number;
  /** Reads that returned outside content; writes whose file appeared outside (the canaries see them too). */
  escapes: number;
  refusedAsEscape: number;
  /** Other errors: mostly ENOENT, when a call met the moment between two renames. */
  otherErrors: number;
}

export interface RaceTally {
  flips: number;
  reads: CallTally;
  writes: CallTally;
}

const INSIDE_CONTENT = "inside content\n";
const ESCAPE_RESULT = /: path escapes workspace$/;
const STOP_GUARD_MS = 5_000;

/**
 * The racer flips `<root>/d` between a directory holding `secret.txt` and a symlink to `<outside>/dir`;
 * meanwhile `read` reads `d/secret.txt` and `write` creates `d/w<n>.txt` (a new name each time), in
 * turn, whichever of them is given.
 */
export async function raceTools(box: Sandbox, tools: { read?: Tool; write?: Tool }, durationMs: number): Promise<RaceTally> {
  const { read, write } = tools;
  const stop = new SharedArrayBuffer(4);
  const racer = new Worker(new URL("./flip-racer.mjs", import.meta.url), {
    workerData: { link: join(box.root, "d"), target: join(box.outside, "dir"), name: "secret.txt", content: INSIDE_CONTENT, stop },
  });
  // The racer says `ready` once its first state is in place, then reports its counts when stopped.
  const nextMessage = () => new Promise<{ ready?: true; flips?: number }>((resolve) => racer.once("message", resolve));
  let racerError: unknown;
  racer.on("error", (error) => {
    racerError = error;
  });
  const reads = emptyTally();
  const writes = emptyTally();
  let stopGuard: NodeJS.Timeout | undefined;
  try {
    await nextMessage();
    const report = nextMessage();
    const deadline = Date.now() + durationMs;
    while (Date.now() < deadline) {
      if (racerError !== undefined) throw racerError;
      if (read !== undefined) {
        const result = await read.execute({ path: "d/secret.txt" });
        record(reads, result, result.content.includes(SECRET), result.content === INSIDE_CONTENT);
      }
      if (write !== undefined) {
        const name = `w${writes.calls}.txt`;
        const result = await write.execute({ path: `d/${name}`, content: "written" });
        record(writes, result, await exists(join(box.outside, "dir", name)), result.isError !== true);
      }
    }
    Atomics.store(new Int32Array(stop), 0, 1);
    const guard = new Promise<never>((_, reject) => {
      stopGuard = setTimeout(() => reject(new Error("racer did not stop")), STOP_GUARD_MS);
    });
    const { flips = 0 } = await Promise.race([report, guard]);
    return { flips, reads, writes };
  } finally {
    clearTimeout(stopGuard);
    await racer.terminate();
  }
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

function emptyTally(): CallTally {
  return { calls: 0, done: 0, escapes: 0, refusedAsEscape: 0, otherErrors: 0 };
}

function record(tally: CallTally, result: ToolResult, escaped: boolean, done: boolean): void {
  tally.calls += 1;
  if (escaped) tally.escapes += 1;
  else if (done) tally.done += 1;
  else if (ESCAPE_RESULT.test(result.content)) tally.refusedAsEscape += 1;
  else tally.otherErrors += 1;
}
