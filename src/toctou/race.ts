/**
 * `--mode race`: a real concurrent attacker (racer.ts) against the unmodified tools, bounded by a
 * number of attempts and a number of seconds, whichever ends first.
 *
 * Attempts alternate between the two tools, on one contested directory (arena.ts): odd attempts
 * write race/escape-<n>.txt, even ones read race/secret.txt. Each call runs the tool's full check and
 * use while the racer flips race/ between a real directory and a symlink to outside/dir.
 *
 * Promises: an attempt counts as an escape only on evidence, never on the tool's own answer: for
 * write, outside/dir/escape-<n>.txt exists with exactly that attempt's bytes; for read, the returned
 * content holds the canary SECRET, which exists only outside the workspace. The figures are
 * self-consistent: escapes ≤ attempts, rate = escapes / attempts (0 when there were no attempts),
 * `firstEscape` is null exactly when there was no escape; the totals are the sums of the per-tool rows.
 * The racer is stopped, and has exited, before this resolves or rejects; an abort of `signal` ends the
 * run after the attempt in flight.
 * Does not promise: any escape. It is a race; zero escapes in a budget says nothing about the next one.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { SECRET, type Sandbox } from "../audit/sandbox.js";
import { TARGET_FILE, prepareArena } from "./arena.js";
import { type RacerStats, startRacer } from "./racer.js";
import { displayPath } from "./report.js";
import type { AttackedTools } from "./tool-sets.js";

export interface RaceBudget {
  attempts: number;
  seconds: number;
}

export interface Tally {
  attempts: number;
  escapes: number;
  escapeRate: number;
  /** `attempt` counts attempts of this tool only (for the total: all attempts). */
  firstEscape: { attempt: number; elapsedMs: number } | null;
}

export type StopReason = "attempts" | "seconds" | "interrupted" | "racer failed";

export interface RaceReport {
  mode: "race";
  tools: string;
  workdir: string;
  /** The workspace root inside `workdir`. */
  workspace: string;
  budget: RaceBudget;
  stoppedBy: StopReason;
  elapsedMs: number;
  total: Tally & { firstEscape: { attempt: number; elapsedMs: number; tool: "read" | "write" } | null };
  perTool: { write: Tally; read: Tally };
  racer: { swaps: number; runningMs: number; swapsPerSecond: number; evictions: number; failure: string | null };
}

export interface RaceRun {
  box: Sandbox;
  toolsName: string;
  tools: AttackedTools;
  budget: RaceBudget;
  narrate: (line: string) => void;
  signal: AbortSignal;
}

const CONTESTED = "race";
const PROGRESS_EVERY_MS = 5_000;

export async function runRace(run: RaceRun): Promise<RaceReport> {
  const { box, tools, budget, narrate, signal } = run;
  const arena = await prepareArena(box, CONTESTED);
  const shown = (path: string) => displayPath(box, path);
  narrate("TOCTOU, race: a racer thread flips a directory and a symlink while the real tools check and use paths.");
  narrate(`tool set: ${run.toolsName}; working in ${box.base} (removed at the end)`);
  narrate(`  ws/${CONTESTED}/ flips between a real directory and a symlink to ${shown(arena.outsideTarget)} (two renames per flip)`);
  narrate(`  attempts alternate: write ${CONTESTED}/escape-<n>.txt, read ${CONTESTED}/${TARGET_FILE}`);
  narrate(`  budget: ${budget.attempts} attempts or ${budget.seconds} s, whichever ends first`);

  const tallies = { write: emptyTally(), read: emptyTally() };
  let first: RaceReport["total"]["firstEscape"] = null;
  let attempts = 0;
  let racerStats: RacerStats;
  let endedAt: number;
  let stoppedBy: StopReason | undefined;
  const racer = await startRacer(arena);
  narrate(`racer started (worker thread ${racer.threadId})`);
  const start = performance.now();
  const deadline = start + budget.seconds * 1_000;
  let nextProgress = start + PROGRESS_EVERY_MS;
  const reasonToStop = (now: number): StopReason | undefined => {
    if (attempts >= budget.attempts) return "attempts";
    if (now >= deadline) return "seconds";
    if (signal.aborted) return "interrupted";
    if (racer.failure() !== null) return "racer failed";
    return undefined;
  };
  try {
    for (let now = performance.now(); (stoppedBy = reasonToStop(now)) === undefined; now = performance.now()) {
      if (now >= nextProgress) {
        nextProgress += PROGRESS_EVERY_MS;
        narrate(`  ${((now - start) / 1_000).toFixed(0)} s: ${attempts} attempts, ${tallies.write.escapes + tallies.read.escapes} escapes, ${racer.swaps()} swaps`);
      }
      attempts += 1;
      const tool = attempts % 2 === 1 ? "write" : "read";
      const tally = tallies[tool];
      tally.attempts += 1;
      const escape = tool === "write" ? await attemptWrite(tools, arena.outsideTarget, attempts) : await attemptRead(tools);
      if (escape === undefined) continue;
      const elapsedMs = performance.now() - start;
      tally.escapes += 1;
      tally.firstEscape ??= { attempt: tally.attempts, elapsedMs };
      if (first === null) {
        first = { attempt: attempts, elapsedMs, tool };
        narrate(`  first escape: attempt ${attempts} (${tool}) after ${elapsedMs.toFixed(1)} ms: ${escape}`);
      }
    }
  } finally {
    // The clock stops with the attempts, not after the racer's shutdown.
    endedAt = performance.now();
    racerStats = await racer.stop();
  }
  const elapsedMs = endedAt - start;
  for (const tally of Object.values(tallies)) tally.escapeRate = rate(tally.escapes, tally.attempts);
  const escapes = tallies.write.escapes + tallies.read.escapes;
  narrate(`stopped by ${stoppedBy} after ${(elapsedMs / 1_000).toFixed(1)} s; racer stopped`);
  return {
    mode: "race",
    tools: run.toolsName,
    workdir: box.base,
    workspace: box.root,
    budget,
    stoppedBy,
    elapsedMs,
    total: { attempts, escapes, escapeRate: rate(escapes, attempts), firstEscape: first },
    perTool: tallies,
    racer: {
      swaps: racerStats.swaps,
      runningMs: racerStats.runningMs,
      swapsPerSecond: racerStats.runningMs > 0 ? racerStats.swaps / (racerStats.runningMs / 1_000) : 0,
      evictions: racerStats.evictions,
      failure: racerStats.failure,
    },
  };
}

/** Writes a payload unique to this attempt; answers the evidence when it landed outside. */
async function attemptWrite(tools: AttackedTools, outsideTarget: string, attempt: number): Promise<string | undefined> {
  const name = `escape-${attempt}.txt`;
  const payload = `attempt ${attempt}: meant for ws/${CONTESTED}/${name}\n`;
  await tools.write.execute({ path: `${CONTESTED}/${name}`, content: payload });
  const landed = await readFile(join(outsideTarget, name), "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  return landed === payload ? `outside/dir/${name} holds its ${Buffer.byteLength(payload)} bytes` : undefined;
}

/** Reads the contested file; answers the evidence when the content is the outside canary's. */
async function attemptRead(tools: AttackedTools): Promise<string | undefined> {
  const result = await tools.read.execute({ path: `${CONTESTED}/${TARGET_FILE}` });
  return result.isError !== true && result.content.includes(SECRET) ? "read returned the canary secret" : undefined;
}

function emptyTally(): Tally {
  return { attempts: 0, escapes: 0, escapeRate: 0, firstEscape: null };
}

function rate(escapes: number, attempts: number): number {
  return attempts === 0 ? 0 : escapes / attempts;
}
