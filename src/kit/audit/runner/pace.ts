/**
 * How fast a target answers, measured before any property runs: the bounds of a call grow with it
 * (watch.ts), a server's calls get room to answer (mcp/target.ts), and a target too slow for the
 * time budget is named by it (command/budget.ts, which decides "too slow" by the time the target's
 * answers take in each property's runs, not by this pace).
 *
 * Promises: `measurePace` starts the target's tools on a fresh sandbox (a server is started and
 * timed apart), then calls one tool (`timedCall`: read, when there is one) on a name that does not
 * exist `LATENCY_SAMPLES` times, one after the other, and answers the median time of one call, and
 * how long the start took. A target without tools that take a path (a module of pure functions) has
 * a pace of 0. A call that refuses still counts: its
 * time is the target's pace all the same. A target that stops answering while it is measured (a
 * server that exits) has its pace measured by the calls it answered, 0 when none, and the `trouble`
 * named: no case caused it, so no verdict stands on the run (audit/command/command.ts).
 * Does not promise: that every tool is as fast as the one timed; a slower tool's property finds out
 * by its own answers (command/budget.ts).
 */
import { inSandbox } from "./property.js";
import { OPERATIONS } from "../../operations/catalog.js";
import { type AuditTarget, TargetStopped, surfaceOf } from "../../operations/target.js";

export const LATENCY_SAMPLES = 5;

export interface Pace {
  /** The median time one call of the target's timed tool took (read, when it has one). */
  latencyMs: number;
  /** How long starting the target's tools on a root took (a server's start; 0 in process). */
  startMs: number;
  /** Why the target stopped answering while it was measured, when it did: no case did it, so its trouble is its own. */
  trouble?: string;
}

export async function measurePace(target: AuditTarget): Promise<Pace> {
  if (target.createWorkspaceTools === undefined) return { latencyMs: 0, startMs: 0 };
  return inSandbox(async (box) => {
    const started = performance.now();
    await target.start?.(box.root);
    const startMs = performance.now() - started;
    const ask = timedCall(target, box.root);
    if (ask === undefined) return { latencyMs: 0, startMs };
    const times: number[] = [];
    let trouble: string | undefined;
    for (let sample = 0; sample < LATENCY_SAMPLES && trouble === undefined; sample++) {
      const before = performance.now();
      trouble = await Promise.resolve(ask()).then(
        () => undefined,
        (error: unknown) => (error instanceof TargetStopped ? error.message : undefined),
      );
      if (trouble === undefined) times.push(performance.now() - before);
    }
    times.sort((one, other) => one - other);
    return { latencyMs: times[Math.floor(times.length / 2)] ?? 0, startMs, ...(trouble === undefined ? {} : { trouble }) };
  });
}

const MISSING = "no-such-file-measures-the-pace.txt";

/**
 * The call the pace is measured by: the first tool, in the catalogue's order, of an operation that
 * changes nothing (read, when there is one), asked about a name that does not exist; a tool that
 * changes the workspace when there is no other (the sandbox is thrown away). None when no tool takes a path.
 */
function timedCall(target: AuditTarget, root: string): (() => Promise<unknown>) | undefined {
  const surface = surfaceOf(target, root);
  const operations = [...OPERATIONS.filter((operation) => !operation.changes), ...OPERATIONS.filter((operation) => operation.changes)];
  const tool = operations.map((operation) => surface.of(operation.id)[0]).find((found) => found !== undefined);
  return tool === undefined ? undefined : () => tool.call({ path: MISSING, paths: [MISSING], source: MISSING, archive: MISSING, destination: `moved-${MISSING}` });
}
