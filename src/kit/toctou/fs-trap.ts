/**
 * The attacker's perfect timing, arranged from outside the code under attack: while `body` runs, this
 * process's `node:fs/promises` `realpath` (or `mkdir`) is replaced by one that makes the true call and
 * then, the first time the call is one the trap is set for, runs the attacker's move before handing the
 * answer back. The caller receives a correct answer that is already stale, which is exactly a TOCTOU
 * window, made as wide as the move needs. The code under attack is not touched: it imports
 * `node:fs/promises` as usual, and `syncBuiltinESMExports` makes its ESM bindings see the swap.
 * It is the kit's one way of placing a move after a call: the deterministic demo and the tests' swap
 * scenarios (fixtures/swap-scenarios.ts) trap the path check's `realpath`, against tools built
 * without options; a test of the verified walk traps the `mkdir` that precedes its open.
 *
 * Promises: the real function is back in place (for `require` and ESM importers alike) when `body`
 * settles, whether it resolves or throws; the move runs at most once, and only after a call that
 * succeeded; calls the trap is not set for pass through unchanged; only one trap can be set at a time
 * in a process (a second one throws instead of stacking).
 * Does not promise: to see calls made any other way (the callback or sync forms, `readlink`, a
 * descriptor); a tool set that checks that way is reported as never checked, not as safe. Paths given
 * as a URL or Buffer are passed to `springsOn` as `String(path)`.
 */
import { promises as fsPromises } from "node:fs";
import { syncBuiltinESMExports } from "node:module";

export interface RealpathTrap {
  /** Whether the attacker moves after this call: its argument and its true answer. */
  springsOn(path: string, answer: string): boolean;
  /** The attacker's move; the caller of `realpath` waits for it, then gets the (stale) answer. */
  move(path: string, answer: string): Promise<void>;
}

export interface MkdirTrap {
  /** Whether the attacker moves after this successful `mkdir` of `path`. */
  springsOn(path: string): boolean;
  /** The attacker's move; the caller of `mkdir` waits for it. */
  move(path: string): Promise<void>;
}

export function withRealpathTrap<T>(trap: RealpathTrap, body: () => Promise<T>): Promise<T> {
  return withTrapOn(
    "realpath",
    {
      springsOn: (path, answer) => typeof answer === "string" && trap.springsOn(path, answer),
      move: (path, answer) => trap.move(path, answer as string),
    },
    body,
  );
}

export function withMkdirTrap<T>(trap: MkdirTrap, body: () => Promise<T>): Promise<T> {
  return withTrapOn("mkdir", { springsOn: (path) => trap.springsOn(path), move: (path) => trap.move(path) }, body);
}

type Trappable = "realpath" | "mkdir";

interface Trap {
  springsOn(path: string, answer: unknown): boolean;
  move(path: string, answer: unknown): Promise<void>;
}

type AnyCall = (...args: unknown[]) => Promise<unknown>;

// `fs.promises` is the object whose properties Node copies into the `node:fs/promises` ESM exports.
const patchable = fsPromises as unknown as Record<Trappable, AnyCall>;
let trapSet = false;

async function withTrapOn<T>(name: Trappable, trap: Trap, body: () => Promise<T>): Promise<T> {
  if (trapSet) throw new Error("a trap on node:fs/promises is already set in this process");
  const real = patchable[name];
  let sprung = false;
  const trapped: AnyCall = async (...args) => {
    const answer = await real(...args);
    if (!sprung && trap.springsOn(String(args[0]), answer)) {
      sprung = true;
      await trap.move(String(args[0]), answer);
    }
    return answer;
  };
  trapSet = true;
  patchable[name] = trapped;
  syncBuiltinESMExports();
  try {
    return await body();
  } finally {
    patchable[name] = real;
    syncBuiltinESMExports();
    trapSet = false;
  }
}
