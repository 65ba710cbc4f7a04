/**
 * `--mode race`: a real concurrent attacker (racer.ts) against the unmodified tools, bounded by a
 * number of attempts and a number of seconds, whichever ends first.
 *
 * Attempts take the operations in `RACE_OPERATIONS` in turn, each a tool call on a path the racer is
 * flipping. Through a directory: a new file, a read and a new directory in race/ (a real directory,
 * or a symlink to outside/dir), an overwrite of over/secret.txt (over/ a real directory, or a symlink
 * to outside/, whose secret.txt is a canary). Through the leaf itself: a read of leaf/secret.txt (a
 * file, or a symlink to outside/dir/secret.txt) and an overwrite of leaf/over.txt (a file, or a
 * symlink to outside/secret.txt). The two swaps catch different mistakes: a directory swap wins
 * against any check by path followed by a use by path; a leaf swap wins only against a use that
 * follows a final symlink (a read that opens the path, a write into the file), and loses to a write
 * that renames a temporary file over the name, which replaces the link. An operation whose tool the
 * target lacks (mkdir, for the chapter's tools) is listed as not applicable, never counted as clean.
 *
 * Promises: an attempt counts as an escape only on evidence, never on the tool's own answer: for a
 * write, a file outside (where the swap sent it, or another beside it: a temporary file left where
 * the race put it) holds exactly that attempt's bytes; for a read, the returned content holds the
 * canary SECRET, which exists only outside the workspace; for mkdir, the directory it meant exists in
 * outside/dir. Every other attempt is counted once as succeeded, refused (`path escapes workspace`)
 * or another error (mostly ENOENT: the call met the instant between two renames). Side effects are
 * counted apart from escapes: once the racer has stopped, every change outside the workspace
 * (side-effects.ts), so a tool that leaks no content but leaves an empty file or a directory outside
 * is seen. The figures are self-consistent: escapes ≤ attempts, the four outcomes add up to the
 * attempts, rate = escapes / attempts (0 when there were no attempts), `firstEscape` is null exactly
 * when there was no escape; the totals are the sums of the per-operation rows. The racer is stopped,
 * and has exited, before this resolves or rejects; an abort of `signal` ends the run after the
 * attempt in flight.
 * Does not promise: any escape. It is a race; zero escapes in a budget says nothing about the next one.
 * Side effects are looked for once, at the end: one that was undone before then is not seen, and the
 * overwritten canary counts once however often it was overwritten.
 */
import { lstat, readFile, readdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { SECRET, type Sandbox, displayPath } from "../sandbox/sandbox.js";
import { type Arena, type Occupant, TARGET_FILE, prepareArena } from "./arena.js";
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
  /** The racer's flips of the name this operation's path goes through, over the run (the total: all flips). */
  swaps: number;
  escapeRate: number;
  /** `attempt` counts attempts of this operation only (for the total: all attempts). */
  firstEscape: { attempt: number; elapsedMs: number } | null;
  /** The evidence of the first escapes, each different, at most `EVIDENCE_KEPT` (in the total, after the operation's name): `outside/dir/escape-7.txt holds its 44 bytes`. */
  evidence: string[];
}

export type StopReason = "attempts" | "seconds" | "interrupted" | "racer failed";

/** The calls a race makes, in the order attempts take them: `<operation>.<what the racer swaps>`. */
export const RACE_OPERATIONS = ["write.directory", "overwrite.directory", "overwrite.leaf", "read.directory", "read.leaf", "mkdir.directory"] as const;
export type RaceOperation = (typeof RACE_OPERATIONS)[number];

export interface RaceReport {
  mode: "race";
  tools: string;
  workdir: string;
  /** The workspace root inside `workdir`. */
  workspace: string;
  budget: RaceBudget;
  stoppedBy: StopReason;
  elapsedMs: number;
  /** Tool calls per second of `elapsedMs`. */
  callsPerSecond: number;
  total: Tally & { firstEscape: { attempt: number; elapsedMs: number; operation: RaceOperation } | null };
  /** One row per operation the target offers, in `RACE_OPERATIONS` order. */
  perOperation: Partial<Record<RaceOperation, Tally>>;
  /** The operations the target does not offer, with the reason. */
  notApplicable: Partial<Record<RaceOperation, string>>;
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
  startRacer?: (arenas: readonly Arena[]) => Promise<Racer>;
}

/** The names the racer flips, what stands there, and where the link leads (below outside/). */
const CONTESTED = {
  race: { occupant: "directory", linkTo: "dir" },
  over: { occupant: "directory", linkTo: "." },
  [`leaf/${TARGET_FILE}`]: { occupant: "file", linkTo: `dir/${TARGET_FILE}` },
  "leaf/over.txt": { occupant: "file", linkTo: TARGET_FILE },
} as const satisfies Record<string, { occupant: Occupant; linkTo: string }>;
type Contested = keyof typeof CONTESTED;
const CONTESTED_NAMES = Object.keys(CONTESTED) as Contested[];
const PROGRESS_EVERY_MS = 5_000;
const EVIDENCE_KEPT = 3;

/**
 * One operation: the tool it calls, the contested name its path goes through, the path for attempt
 * `n` (`<n>` when narrated), and, for what makes something, where it lands below outside/ when it
 * escapes (a read's evidence is the canary secret in its answer).
 */
type Operation = { contests: Contested; path: (n: string) => string } & ({ tool: "read" } | { tool: "write" | "mkdir"; lands: (n: string) => string });

const OPERATIONS: Record<RaceOperation, Operation> = {
  "write.directory": { tool: "write", contests: "race", path: (n) => `race/escape-${n}.txt`, lands: (n) => `dir/escape-${n}.txt` },
  "overwrite.directory": { tool: "write", contests: "over", path: () => `over/${TARGET_FILE}`, lands: () => TARGET_FILE },
  "overwrite.leaf": { tool: "write", contests: "leaf/over.txt", path: () => "leaf/over.txt", lands: () => TARGET_FILE },
  "read.directory": { tool: "read", contests: "race", path: () => `race/${TARGET_FILE}` },
  "read.leaf": { tool: "read", contests: `leaf/${TARGET_FILE}`, path: () => `leaf/${TARGET_FILE}` },
  "mkdir.directory": { tool: "mkdir", contests: "race", path: (n) => `race/made-${n}`, lands: (n) => `dir/made-${n}` },
};

/** The tool an operation calls: `write` for a new file and an overwrite alike. */
export function raceOperationTool(operation: RaceOperation): keyof AttackedTools {
  return OPERATIONS[operation].tool;
}

export async function runRace(run: RaceRun): Promise<RaceReport> {
  const { box, tools, budget, narrate, signal } = run;
  const arenas = await layOutArenas(box);
  const shown = (path: string) => displayPath(box, path);
  const offered = RACE_OPERATIONS.filter((operation) => tools[OPERATIONS[operation].tool] !== undefined);
  const notApplicable = Object.fromEntries(
    RACE_OPERATIONS.filter((operation) => !offered.includes(operation)).map((operation) => [operation, `the target has no ${OPERATIONS[operation].tool} tool`]),
  );
  narrate("TOCTOU, race: a racer thread flips directories, files and symlinks while the real tools check and use paths.");
  narrate(`tool set: ${run.toolsName}; working in ${box.base} (removed at the end)`);
  for (const arena of arenas)
    narrate(`  ${shown(arena.contested)} flips between a real ${arena.occupant} and a symlink to ${shown(arena.outsideTarget)}`);
  narrate(`  attempts take in turn: ${offered.map((operation) => `${operation} (${OPERATIONS[operation].tool} ${OPERATIONS[operation].path("<n>")})`).join(", ")}`);
  for (const [operation, reason] of Object.entries(notApplicable)) narrate(`  ${operation}: not applicable, ${reason}`);
  narrate(`  budget: ${budget.attempts} attempts or ${budget.seconds} s, whichever ends first`);

  const tallies = Object.fromEntries(offered.map((operation) => [operation, emptyTally()])) as Partial<Record<RaceOperation, Tally>>;
  const examined = new Set<string>();
  const firstEvidence: string[] = [];
  let first: RaceReport["total"]["firstEscape"] = null;
  let attempts = 0;
  let racerStats: RacerStats;
  let endedAt: number;
  let stoppedBy: StopReason | undefined;
  const racer = await (run.startRacer ?? startRacer)(arenas);
  narrate(`racer started (worker thread ${racer.threadId})`);
  const start = performance.now();
  const deadline = start + budget.seconds * 1_000;
  let nextProgress = start + PROGRESS_EVERY_MS;
  const escapesSoFar = () => Object.values(tallies).reduce((sum, tally) => sum + tally.escapes, 0);
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
        narrate(`  ${((now - start) / 1_000).toFixed(0)} s: ${attempts} attempts, ${escapesSoFar()} escapes, ${racer.swaps()} swaps`);
      }
      const operation = offered[attempts % offered.length] as RaceOperation;
      attempts += 1;
      const tally = tallies[operation] as Tally;
      tally.attempts += 1;
      const { result, escape } = await attempt(box, tools, operation, attempts, examined);
      if (escape === undefined) {
        countOutcome(tally, result);
        continue;
      }
      const elapsedMs = performance.now() - start;
      tally.escapes += 1;
      tally.firstEscape ??= { attempt: tally.attempts, elapsedMs };
      if (tally.evidence.length < EVIDENCE_KEPT && !tally.evidence.includes(escape)) tally.evidence.push(escape);
      const told = `${operation}: ${escape}`;
      if (firstEvidence.length < EVIDENCE_KEPT && !firstEvidence.includes(told)) firstEvidence.push(told);
      if (first === null) {
        first = { attempt: attempts, elapsedMs, operation };
        narrate(`  first escape: attempt ${attempts} (${operation}) after ${elapsedMs.toFixed(1)} ms: ${escape}`);
      }
    }
  } finally {
    // The clock stops with the attempts, not after the racer's shutdown.
    endedAt = performance.now();
    racerStats = await racer.stop();
  }
  const elapsedMs = endedAt - start;
  for (const operation of offered) {
    const tally = tallies[operation] as Tally;
    tally.escapeRate = rate(tally.escapes, tally.attempts);
    tally.swaps = racerStats.swapsPerArena[CONTESTED_NAMES.indexOf(OPERATIONS[operation].contests)] ?? 0;
  }
  const rows = Object.values(tallies);
  const sum = (count: (tally: Tally) => number) => rows.reduce((total, tally) => total + count(tally), 0);
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
    callsPerSecond: elapsedMs > 0 ? attempts / (elapsedMs / 1_000) : 0,
    total: {
      attempts,
      escapes,
      succeeded: sum((tally) => tally.succeeded),
      refused: sum((tally) => tally.refused),
      otherErrors: sum((tally) => tally.otherErrors),
      swaps: racerStats.swaps,
      escapeRate: rate(escapes, attempts),
      firstEscape: first,
      evidence: firstEvidence,
    },
    perOperation: tallies,
    notApplicable,
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

/** The arenas of `CONTESTED`, in its order: each inside the workspace, its link pointing out. */
async function layOutArenas(box: Sandbox): Promise<Arena[]> {
  const arenas: Arena[] = [];
  for (const name of CONTESTED_NAMES) arenas.push(await prepareArena(box, name, { occupant: CONTESTED[name].occupant, linkTo: join(box.outside, CONTESTED[name].linkTo) }));
  return arenas;
}

/** What one call answered, and the evidence of an escape when there is some. */
interface Attempt {
  result: ToolResult;
  escape: string | undefined;
}

async function attempt(box: Sandbox, tools: AttackedTools, operation: RaceOperation, attempt: number, examined: Set<string>): Promise<Attempt> {
  const call = OPERATIONS[operation];
  const n = String(attempt);
  const asked = call.path(n);
  if (call.tool === "read") {
    const result = await tools.read.execute({ path: asked });
    return { result, escape: result.isError !== true && result.content.includes(SECRET) ? "read returned the canary secret" : undefined };
  }
  const landing = join(box.outside, call.lands(n));
  if (call.tool === "mkdir") {
    const result = await (tools.mkdir as NonNullable<AttackedTools["mkdir"]>).execute({ path: asked });
    const made = await lstat(landing).then(
      (stats) => stats.isDirectory(),
      () => false,
    );
    return { result, escape: made ? `${displayPath(box, landing)} is the directory it made` : undefined };
  }
  const payload = `attempt ${attempt}: meant for ws/${asked}\n`;
  const result = await tools.write.execute({ path: asked, content: payload });
  const landed = await landedOutside(landing, payload, examined);
  return { result, escape: landed === undefined ? undefined : `${displayPath(box, landed)} holds its ${Buffer.byteLength(payload)} bytes` };
}

/**
 * The file holding a write's payload: `landing`, or one beside it under a name not `examined` before
 * (each other file there is read once: what a later attempt leaves is new).
 */
async function landedOutside(landing: string, payload: string, examined: Set<string>): Promise<string | undefined> {
  const beside = dirname(landing);
  const others = (await readdir(beside)).map((entry) => join(beside, entry)).filter((entry) => entry !== landing && !examined.has(entry));
  for (const candidate of [landing, ...others]) {
    examined.add(candidate);
    const landed = await readFile(candidate, "utf8").catch((error: NodeJS.ErrnoException) => {
      // ENOENT: not written there; EISDIR: directories (the racer's, mkdir's, outside/dir) are not payloads.
      if (error.code === "ENOENT" || error.code === "EISDIR") return undefined;
      throw error;
    });
    if (landed === payload) return candidate;
  }
  return undefined;
}

/** Files an attempt that left no evidence of an escape under what the tool answered. */
function countOutcome(tally: Tally, result: ToolResult): void {
  if (result.isError !== true) tally.succeeded += 1;
  else if (result.content.endsWith(ESCAPE_MESSAGE)) tally.refused += 1;
  else tally.otherErrors += 1;
}

function emptyTally(): Tally {
  return { attempts: 0, escapes: 0, succeeded: 0, refused: 0, otherErrors: 0, swaps: 0, escapeRate: 0, firstEscape: null, evidence: [] };
}

function rate(escapes: number, attempts: number): number {
  return attempts === 0 ? 0 : escapes / attempts;
}
