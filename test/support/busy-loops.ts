// A busy machine on demand: two busy loops (child processes spinning) per core, as a CI runner shared
// with other jobs is. The soak (test/sweeps/busy-machine.sweep.ts) and the bench's budget rows
// (scripts/bench-suite.ts) audit beside them.
import { spawn } from "node:child_process";
import { availableParallelism } from "node:os";

/** Starts the loops; `stop` ends every one of them. */
export function startBusyLoops(): { count: number; stop(): void } {
  const loops = Array.from({ length: 2 * availableParallelism() }, () => spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }));
  return { count: loops.length, stop: () => loops.forEach((loop) => loop.kill("SIGKILL")) };
}
