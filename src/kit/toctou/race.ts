/**
 * `--mode race`: a real concurrent attacker (racer.ts) against the unmodified tools, bounded by a
 * number of attempts and a number of seconds, whichever ends first.
 *
 * Attempts take the operations in `RACE_OPERATIONS` in turn, each a call of the target's first tool
 * that does the operation of the catalogue (operations/catalog.ts) on a path the racer is flipping.
 * Through a directory: in race/ (a real directory, or a symlink to outside/dir) a new file, a read, a
 * new directory, a move's source and its destination, a copy's destination and a delete; in over/ (a
 * real directory, or a symlink to outside/, whose secret.txt is a canary) an overwrite and an edit of
 * over/secret.txt; in look/ (a real directory holding only decoy.txt, or a symlink to outside/dir) a
 * listing. Through the leaf itself: a read of leaf/secret.txt (a file, or a symlink to
 * outside/dir/secret.txt), an overwrite and an edit of leaf/over.txt (a file, or a symlink to
 * outside/secret.txt). The two swaps catch different mistakes: a directory swap wins against any
 * check by path followed by a use by path; a leaf swap wins only against a use that follows a final
 * symlink (a read that opens the path, a write into the file), and loses to a write that renames a
 * temporary file over the name, which replaces the link. An operation the target has no tool for
 * (mkdir, edit, list, move, copy and delete, for the chapter's tools) is listed as not applicable,
 * never counted as clean.
 *
 * Promises: an attempt counts as an escape only on evidence, never on the tool's own answer: for a
 * write, a copy or a move's destination, a file outside (where the swap sent it, or another beside
 * it: a temporary file left where the race put it) holds exactly that attempt's bytes; for an edit, a
 * file outside holds that attempt's marker; for a read, the returned content holds the canary SECRET,
 * which exists only outside the workspace; for a listing, the answer names secret.txt, which only
 * outside/dir holds; for mkdir, the directory it meant exists in outside/dir; for a move's source, the
 * file it moved into the workspace holds SECRET; for a delete, outside/dir/secret.txt is gone. The
 * canary a move or a delete took is put back at once, so the attempts after it can escape too. Every
 * other attempt is counted once as succeeded, refused (an error answer in any wording that is not an
 * operating system's error: `isRefusal`) or another error (mostly ENOENT: the call met the instant
 * between two renames). Side effects are
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
import { lstat, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { SECRET, type Sandbox, displayPath } from "../sandbox/sandbox.js";
import { type Arena, type Occupant, TARGET_FILE, prepareArena } from "./arena.js";
import { type Racer, type RacerStats, startRacer } from "./racer.js";
import type { ToolResult } from "../../gates/tool.js";
import { type SideEffects, sideEffectsOf } from "./side-effects.js";
import { type OperationId, type OperationInput, type OracleId, operation as catalogued } from "../operations/catalog.js";
import type { OperationTool, Surface } from "../operations/surface.js";
import { isRefusal } from "./refusal.js";

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

/** Why the race stopped, as a sentence says it ("stopped by interrupted" read as a typo). */
export function stopReasonText(reason: StopReason): string {
  switch (reason) {
    case "attempts":
      return "stopped at its budget of attempts";
    case "seconds":
      return "stopped at its time budget";
    case "interrupted":
      return "interrupted";
    case "racer failed":
      return "stopped because the racer failed";
  }
}

/** The calls a race makes, in the order attempts take them: `<operation>.<what the racer swaps>`. */
export const RACE_OPERATIONS = [
  "write.directory",
  "overwrite.directory",
  "overwrite.leaf",
  "read.directory",
  "read.leaf",
  "mkdir.directory",
  "edit.directory",
  "edit.leaf",
  "list.directory",
  "move.source",
  "move.destination",
  "copy.destination",
  "delete.directory",
] as const;
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
  /** When each escape happened, in ms from the start, in order: what `--svg` draws. */
  escapesAtMs: number[];
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
  /** The target's tools on `box.root`, by operation: each race operation calls the first that does its operation. */
  surface: Surface;
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
  // Its decoy has another name than the canary beside the link's end: a listing naming the canary listed outside.
  look: { occupant: "directory", linkTo: "dir", decoyName: "decoy.txt" },
} as const satisfies Record<string, { occupant: Occupant; linkTo: string; decoyName?: string }>;
type Contested = keyof typeof CONTESTED;
const CONTESTED_NAMES = Object.keys(CONTESTED) as Contested[];
const PROGRESS_EVERY_MS = 5_000;
const EVIDENCE_KEPT = 3;

/**
 * How an attempt's escape shows: the canary secret in the answer (a read); the canary's name in the
 * answer (a listing); a file at `lands` below outside/, or beside it, holding the attempt's payload
 * (`payload`: exactly its bytes; `marker`: its payload among other text, an edit); the directory it
 * meant made at `lands` (mkdir); the canary moved into the workspace, at the move's other end (a
 * move's source); the canary outside/dir/secret.txt gone (a delete).
 */
type Evidence =
  | { kind: "secret answered" }
  | { kind: "canary named" }
  | { kind: "landed"; holds: "payload" | "marker"; lands: (n: string) => string }
  | { kind: "made"; lands: (n: string) => string }
  | { kind: "canary taken" }
  | { kind: "canary removed" };

/**
 * One race operation: the catalogue's operation whose tool it calls, the contested name its path goes
 * through, the path (`<n>` when narrated), for a move or a copy the other end (a name in the
 * workspace's top directory, which the race fills with the attempt's payload first when it is the
 * source), and its evidence.
 */
interface RaceCall {
  operation: OperationId;
  contests: Contested;
  path: (n: string) => string;
  otherEnd?: { role: "source" | "destination"; name: (n: string) => string };
  evidence: Evidence;
}

const landed = (holds: "payload" | "marker", lands: (n: string) => string): Evidence => ({ kind: "landed", holds, lands });

const OPERATIONS: Record<RaceOperation, RaceCall> = {
  "write.directory": { operation: "write", contests: "race", path: (n) => `race/escape-${n}.txt`, evidence: landed("payload", (n) => `dir/escape-${n}.txt`) },
  "overwrite.directory": { operation: "write", contests: "over", path: () => `over/${TARGET_FILE}`, evidence: landed("payload", () => TARGET_FILE) },
  "overwrite.leaf": { operation: "write", contests: "leaf/over.txt", path: () => "leaf/over.txt", evidence: landed("payload", () => TARGET_FILE) },
  "read.directory": { operation: "read", contests: "race", path: () => `race/${TARGET_FILE}`, evidence: { kind: "secret answered" } },
  "read.leaf": { operation: "read", contests: `leaf/${TARGET_FILE}`, path: () => `leaf/${TARGET_FILE}`, evidence: { kind: "secret answered" } },
  "mkdir.directory": { operation: "mkdir", contests: "race", path: (n) => `race/made-${n}`, evidence: { kind: "made", lands: (n) => `dir/made-${n}` } },
  "edit.directory": { operation: "edit", contests: "over", path: () => `over/${TARGET_FILE}`, evidence: landed("marker", () => TARGET_FILE) },
  "edit.leaf": { operation: "edit", contests: "leaf/over.txt", path: () => "leaf/over.txt", evidence: landed("marker", () => TARGET_FILE) },
  "list.directory": { operation: "list", contests: "look", path: () => "look", evidence: { kind: "canary named" } },
  "move.source": {
    operation: "move",
    contests: "race",
    path: () => `race/${TARGET_FILE}`,
    otherEnd: { role: "destination", name: (n) => `taken-${n}.txt` },
    evidence: { kind: "canary taken" },
  },
  "move.destination": {
    operation: "move",
    contests: "race",
    path: (n) => `race/moved-${n}.txt`,
    otherEnd: { role: "source", name: (n) => `moving-${n}.txt` },
    evidence: landed("payload", (n) => `dir/moved-${n}.txt`),
  },
  "copy.destination": {
    operation: "copy",
    contests: "race",
    path: (n) => `race/copied-${n}.txt`,
    otherEnd: { role: "source", name: (n) => `copying-${n}.txt` },
    evidence: landed("payload", (n) => `dir/copied-${n}.txt`),
  },
  "delete.directory": { operation: "delete", contests: "race", path: () => `race/${TARGET_FILE}`, evidence: { kind: "canary removed" } },
};

/** The catalogue's operation a race operation calls a tool for: `write` for a new file and an overwrite alike. */
export function raceOperationTool(operation: RaceOperation): OperationId {
  return OPERATIONS[operation].operation;
}

/** The catalogue's oracle each kind of evidence shows broken: its consequence is what an escape cost. */
const BREACHED: Record<Evidence["kind"], OracleId> = {
  "secret answered": "secretInAnswer",
  "canary named": "outsideRevealed",
  landed: "outsideChanged",
  made: "outsideChanged",
  // The canary left outside/ (the race puts it back): worse than its content coming in.
  "canary taken": "outsideChanged",
  "canary removed": "outsideChanged",
};

/** The oracle an escape of this race operation broke, by its evidence. */
export function raceEscapeOracle(operation: RaceOperation): OracleId {
  return BREACHED[OPERATIONS[operation].evidence.kind];
}

/** The input of attempt `n`: the path through the contested name, and what the operation needs besides. */
function inputOf(call: RaceCall, n: string, payload: string): OperationInput {
  const path = call.path(n);
  if (call.otherEnd !== undefined) {
    const other = call.otherEnd.name(n);
    return call.otherEnd.role === "source" ? { source: other, destination: path } : { source: path, destination: other };
  }
  if (call.operation === "write") return { path, content: payload };
  // Every decoy and canary ends with a newline.
  if (call.operation === "edit") return { path, oldText: "\n", newText: `\n${payload}` };
  return { path };
}

export async function runRace(run: RaceRun): Promise<RaceReport> {
  const { box, surface, budget, narrate, signal } = run;
  const arenas = await layOutArenas(box);
  const shown = (path: string) => displayPath(box, path);
  const toolOf = (operation: RaceOperation): OperationTool | undefined => surface.of(OPERATIONS[operation].operation)[0];
  const offered = RACE_OPERATIONS.filter((operation) => toolOf(operation) !== undefined);
  const notApplicable = Object.fromEntries(
    RACE_OPERATIONS.filter((operation) => !offered.includes(operation)).map((operation) => [operation, `the target has no tool that ${catalogued(OPERATIONS[operation].operation).does}`]),
  );
  // Put back at once when a move or a delete takes it, so the attempts after it can escape too.
  const canary = join(box.outside, CONTESTED.race.linkTo, TARGET_FILE);
  const ground: Ground = { box, examined: new Set(), canary: { path: canary, bytes: await readFile(canary) } };
  narrate("TOCTOU, race: a racer thread flips directories, files and symlinks while the real tools check and use paths.");
  narrate(`tool set: ${run.toolsName}; working in ${box.base} (removed at the end)`);
  for (const arena of arenas)
    narrate(`  ${shown(arena.contested)} flips between a real ${arena.occupant} and a symlink to ${shown(arena.outsideTarget)}`);
  narrate(`  attempts take in turn: ${offered.map((operation) => `${operation} (${toolOf(operation)?.name} ${OPERATIONS[operation].path("<n>")})`).join(", ")}`);
  for (const [operation, reason] of Object.entries(notApplicable)) narrate(`  ${operation}: not applicable, ${reason}`);
  narrate(`  budget: ${budget.attempts} attempts or ${budget.seconds} s, whichever ends first`);

  const tallies = Object.fromEntries(offered.map((operation) => [operation, emptyTally()])) as Partial<Record<RaceOperation, Tally>>;
  const firstEvidence: string[] = [];
  let first: RaceReport["total"]["firstEscape"] = null;
  const escapesAtMs: number[] = [];
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
      const { result, escape } = await attempt(ground, toolOf(operation) as OperationTool, operation, attempts);
      if (escape === undefined) {
        countOutcome(tally, result);
        continue;
      }
      const elapsedMs = performance.now() - start;
      escapesAtMs.push(elapsedMs);
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
  narrate(`${stopReasonText(stoppedBy)} after ${(elapsedMs / 1_000).toFixed(1)} s; racer stopped`);
  const sideEffects = await sideEffectsOf(box);
  return {
    mode: "race",
    tools: run.toolsName,
    workdir: box.base,
    workspace: box.root,
    budget,
    stoppedBy,
    elapsedMs,
    escapesAtMs,
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
  for (const name of CONTESTED_NAMES) {
    const { occupant, linkTo, ...decoy } = CONTESTED[name];
    arenas.push(await prepareArena(box, name, { occupant, linkTo: join(box.outside, linkTo), ...decoy }));
  }
  return arenas;
}

/** What one call answered, and the evidence of an escape when there is some. */
interface Attempt {
  result: ToolResult;
  escape: string | undefined;
}

/** Where the race looks for evidence, and what it puts back. */
interface Ground {
  box: Sandbox;
  /** Outside files read once already: what a later attempt leaves beside a landing is new. */
  examined: Set<string>;
  /** outside/dir/secret.txt, the canary a move or a delete may take, and its bytes. */
  canary: { path: string; bytes: Buffer };
}

async function attempt(ground: Ground, tool: OperationTool, operation: RaceOperation, attempt: number): Promise<Attempt> {
  const { box } = ground;
  const call = OPERATIONS[operation];
  const n = String(attempt);
  const payload = `attempt ${attempt}: meant for ws/${call.path(n)}\n`;
  const source = call.otherEnd?.role === "source" ? join(box.root, call.otherEnd.name(n)) : undefined;
  if (source !== undefined) await writeFile(source, payload);
  const result = await tool.call(inputOf(call, n, payload));
  try {
    return { result, escape: await evidenceOf(ground, call, n, payload, result) };
  } finally {
    // What is left in the workspace's top directory is the race's own: a source not moved, a decoy taken.
    if (call.otherEnd !== undefined) await rm(join(box.root, call.otherEnd.name(n)), { force: true });
  }
}

async function evidenceOf(ground: Ground, call: RaceCall, n: string, payload: string, result: ToolResult): Promise<string | undefined> {
  const { box, canary } = ground;
  const { evidence } = call;
  switch (evidence.kind) {
    case "secret answered":
      return result.isError !== true && result.content.includes(SECRET) ? "read returned the canary secret" : undefined;
    case "canary named":
      return result.content.includes(TARGET_FILE) ? `the listing named ${TARGET_FILE}, which only ${displayPath(box, dirname(canary.path))} holds` : undefined;
    case "made": {
      const landing = join(box.outside, evidence.lands(n));
      const made = await lstat(landing).then(
        (stats) => stats.isDirectory(),
        () => false,
      );
      return made ? `${displayPath(box, landing)} is the directory it made` : undefined;
    }
    case "landed": {
      const holds = evidence.holds === "payload" ? (content: string) => content === payload : (content: string) => content.includes(payload);
      const landed = await landedOutside(join(box.outside, evidence.lands(n)), holds, ground.examined);
      return landed === undefined ? undefined : `${displayPath(box, landed)} holds its ${evidence.holds === "payload" ? `${Buffer.byteLength(payload)} bytes` : "edit"}`;
    }
    case "canary taken": {
      const taken = join(box.root, call.otherEnd?.name(n) ?? "");
      const took = (await readFile(taken, "utf8").catch(() => "")).includes(SECRET);
      if (!took) return undefined;
      await writeFile(canary.path, canary.bytes);
      return `${displayPath(box, canary.path)} was moved into the workspace as ${displayPath(box, taken)}`;
    }
    case "canary removed": {
      const removed = await lstat(canary.path).then(
        () => false,
        () => true,
      );
      if (!removed) return undefined;
      await writeFile(canary.path, canary.bytes);
      return `${displayPath(box, canary.path)} was removed`;
    }
  }
}

/**
 * The file holding what a call wrote (`holds` says whether it does): `landing`, or one beside it under
 * a name not `examined` before (each other file there is read once: what a later attempt leaves is new).
 */
async function landedOutside(landing: string, holds: (content: string) => boolean, examined: Set<string>): Promise<string | undefined> {
  const beside = dirname(landing);
  const others = (await readdir(beside)).map((entry) => join(beside, entry)).filter((entry) => entry !== landing && !examined.has(entry));
  for (const candidate of [landing, ...others]) {
    examined.add(candidate);
    const landed = await readFile(candidate, "utf8").catch((error: NodeJS.ErrnoException) => {
      // ENOENT: not written there; EISDIR: directories (the racer's, mkdir's, outside/dir) are not payloads.
      if (error.code === "ENOENT" || error.code === "EISDIR") return undefined;
      throw error;
    });
    if (landed !== undefined && holds(landed)) return candidate;
  }
  return undefined;
}

/** Files an attempt that left no evidence of an escape under what the tool answered. */
function countOutcome(tally: Tally, result: ToolResult): void {
  if (result.isError !== true) tally.succeeded += 1;
  else if (isRefusal(result.content)) tally.refused += 1;
  else tally.otherErrors += 1;
}

function emptyTally(): Tally {
  return { attempts: 0, escapes: 0, succeeded: 0, refused: 0, otherErrors: 0, swaps: 0, escapeRate: 0, firstEscape: null, evidence: [] };
}

function rate(escapes: number, attempts: number): number {
  return attempts === 0 ? 0 : escapes / attempts;
}
