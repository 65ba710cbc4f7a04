/**
 * `--mode race`: a real concurrent attacker (racer.ts) against the unmodified tools, bounded by a
 * number of attempts and a number of seconds, whichever ends first.
 *
 * Attempts alternate between the two tools, on one contested directory (arena.ts): odd attempts
 * write race/escape-<n>.txt, even ones read race/secret.txt. Each call runs the tool's full check and
 * use while the racer flips race/ between a real directory and a symlink to outside/dir.
 *
 * Promises: an attempt counts as an escape only on evidence, never on the tool's own answer: for
 * write, outside/dir/escape-<n>.txt, or a file under another name there (a write's temporary file left
 * where the race put it), exists with exactly that attempt's bytes; for read, the returned
 * content holds the canary SECRET, which exists only outside the workspace. Every other attempt is
 * counted once as succeeded, refused (`path escapes workspace`) or another error (mostly ENOENT: the
 * call met the instant between two renames). Side effects are counted apart from escapes: once the
 * racer has stopped, every change outside the workspace (side-effects.ts), so a tool that leaks no
 * content but leaves an empty file or a directory outside is seen. The figures are self-consistent:
 * escapes ≤ attempts, the four outcomes add up to the attempts, rate = escapes / attempts (0 when
 * there were no attempts), `firstEscape` is null exactly when there was no escape; the totals are the
 * sums of the per-tool rows. The racer is stopped, and has exited, before this resolves or rejects; an
 * abort of `signal` ends the run after the attempt in flight.
 * Does not promise: any escape. It is a race; zero escapes in a budget says nothing about the next one.
 * Side effects are looked for once, at the end: one that was undone before then is not seen.
 */
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { SECRET, type Sandbox, displayPath } from "../sandbox/sandbox.js";
import { type Arena, TARGET_FILE, prepareArena } from "./arena.js";
import { type Racer, type RacerStats, startRacer } from "./racer.js";
import type { ToolResult } from "../../gates/tool.js";
import { type SideEffects, sideEffectsOf } from "./side-effects.js";
import type { AttackedTools } from "../sandbox/tool-sets.js";
import { ESCAPE_MESSAGE } from "../../gates/messages.js";

export interface RaceBudget {
  attempts: number;
  seconds: number;
}

export interface Tally {
  attempts: number;
  /** Attempts with evidence of outside content; the three counts after it are the other attempts. */
  escapes: number;
  /** The tool answered success and nothing leaked. */
  succeeded: number;
  /** The tool answered `path escapes workspace`. */
  refused: number;
  /** Any other error: ENOENT between two renames, ELOOP, a refused hardlink, … */
  otherErrors: number;
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
  /** Everything changed outside the workspace, looked for after the racer stopped. */
  sideEffects: SideEffects;
  racer: { swaps: number; runningMs: number; swapsPerSecond: number; evictions: number; failure: string | null };
}

export interface RaceRun {
  box: Sandbox;
  toolsName: string;
  tools: AttackedTools;
  budget: RaceBudget;
  narrate: (line: string) => void;
  signal: AbortSignal;
  /** The attacker (default racer.ts's thread); a test puts in one that cannot swap. */
  startRacer?: (arena: Arena) => Promise<Racer>;
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
  const examined = new Set<string>();
  let first: RaceReport["total"]["firstEscape"] = null;
  let attempts = 0;
  let racerStats: RacerStats;
  let endedAt: number;
  let stoppedBy: StopReason | undefined;
  const racer = await (run.startRacer ?? startRacer)(arena);
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
      const { result, escape } = tool === "write" ? await attemptWrite(tools, arena.outsideTarget, attempts, examined) : await attemptRead(tools);
      if (escape === undefined) {
        countOutcome(tally, result);
        continue;
      }
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
  const sum = (count: (tally: Tally) => number) => count(tallies.write) + count(tallies.read);
  const escapes = sum((tally) => tally.escapes);
  narrate(`stopped by ${stoppedBy} after ${(elapsedMs / 1_000).toFixed(1)} s; racer stopped`);
  const sideEffects = await sideEffectsOf(box);
  return {
    mode: "race",
    tools: run.toolsName,
    workdir: box.base,
    workspace: box.root,
    budget,
    stoppedBy,
    elapsedMs,
    total: {
      attempts,
      escapes,
      succeeded: sum((tally) => tally.succeeded),
      refused: sum((tally) => tally.refused),
      otherErrors: sum((tally) => tally.otherErrors),
      escapeRate: rate(escapes, attempts),
      firstEscape: first,
    },
    perTool: tallies,
    sideEffects,
    racer: {
      swaps: racerStats.swaps,
      runningMs: racerStats.runningMs,
      swapsPerSecond: racerStats.runningMs > 0 ? racerStats.swaps / (racerStats.runningMs / 1_000) : 0,
      evictions: racerStats.evictions,
      failure: racerStats.failure,
    },
  };
}

/** What one call answered, and the evidence of an escape when there is some. */
interface Attempt {
  result: ToolResult;
  escape: string | undefined;
}

/**
 * Writes a payload unique to this attempt; the evidence is that payload found outside, under its name
 * or under a name not `examined` before (each other file there is read once: what a later attempt
 * leaves is new).
 */
async function attemptWrite(tools: AttackedTools, outsideTarget: string, attempt: number, examined: Set<string>): Promise<Attempt> {
  const name = `escape-${attempt}.txt`;
  const payload = `attempt ${attempt}: meant for ws/${CONTESTED}/${name}\n`;
  const result = await tools.write.execute({ path: `${CONTESTED}/${name}`, content: payload });
  const others = (await readdir(outsideTarget)).filter((entry) => entry !== name && !examined.has(entry));
  for (const candidate of [name, ...others]) {
    examined.add(candidate);
    const landed = await readFile(join(outsideTarget, candidate), "utf8").catch((error: NodeJS.ErrnoException) => {
      // ENOENT: not written there; EISDIR: the racer's directories are not payloads.
      if (error.code === "ENOENT" || error.code === "EISDIR") return undefined;
      throw error;
    });
    if (landed === payload) return { result, escape: `outside/dir/${candidate} holds its ${Buffer.byteLength(payload)} bytes` };
  }
  return { result, escape: undefined };
}

/** Reads the contested file; the evidence is the outside canary's content in the answer. */
async function attemptRead(tools: AttackedTools): Promise<Attempt> {
  const result = await tools.read.execute({ path: `${CONTESTED}/${TARGET_FILE}` });
  return { result, escape: result.isError !== true && result.content.includes(SECRET) ? "read returned the canary secret" : undefined };
}

/** Files an attempt that left no evidence of an escape under what the tool answered. */
function countOutcome(tally: Tally, result: ToolResult): void {
  if (result.isError !== true) tally.succeeded += 1;
  else if (result.content.endsWith(ESCAPE_MESSAGE)) tally.refused += 1;
  else tally.otherErrors += 1;
}

function emptyTally(): Tally {
  return { attempts: 0, escapes: 0, succeeded: 0, refused: 0, otherErrors: 0, escapeRate: 0, firstEscape: null };
}

function rate(escapes: number, attempts: number): number {
  return attempts === 0 ? 0 : escapes / attempts;
}
