/**
 * The attacker's perfect timing, arranged from outside the code under attack: while `body` runs, this
 * process's `realpath` (`node:fs/promises`' and `realpathSync.native`, the one the tools' check makes)
 * or `node:fs/promises`' `mkdir` is replaced by one that makes the true call and then, the first time
 * the call is one the trap is set for, runs the attacker's move before handing the answer back. The
 * caller receives a correct answer that is already stale, which is exactly a TOCTOU window, made as
 * wide as the move needs. The code under attack is not touched: `syncBuiltinESMExports` makes its
 * ESM imports of `node:fs/promises` see the swap, and `realpathSync.native` is a property it looks
 * up when it calls.
 * It is the kit's one way of placing a move after a call: the deterministic demo and the tests' swap
 * scenarios (fixtures/swap-scenarios.ts) trap the path check's `realpath`, against tools built
 * without options; a test of the verified walk traps the `mkdir` that precedes its open.
 *
 * Promises: the real function is back in place (for `require` and ESM importers alike) when `body`
 * settles, whether it resolves or throws; the move runs at most once, and only after a call that
 * succeeded; calls the trap is not set for pass through unchanged; only one trap can be set at a time
 * in a process (a second one throws instead of stacking).
 * A realpath trap's move is synchronous, so that it can run inside a synchronous call too.
 * Does not promise: to see calls made any other way (the callback form, the JS `realpathSync`, a sync
 * `mkdir`, `readlink`, a descriptor); a tool set that checks that way is reported as never checked, not
 * as safe. Paths given
 * as a URL or Buffer are passed to `springsOn` as `String(path)`.
 */
import { promises as fsPromises, realpathSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";

export interface RealpathTrap {
  /** Whether the attacker moves after this call: its argument and its true answer. */
  springsOn(path: string, answer: string): boolean;
  /** The attacker's move; the caller of `realpath` waits for it, then gets the (stale) answer. */
  move(path: string, answer: string): void;
}

export interface MkdirTrap {
  /** Whether the attacker moves after this successful `mkdir` of `path`. */
  springsOn(path: string): boolean;
  /** The attacker's move; the caller of `mkdir` waits for it. */
  move(path: string): Promise<void>;
}

/** Springs once: after the first call it is set for, of either form, the move runs. */
function once(springsOn: (path: string, answer: unknown) => boolean): (path: string, answer: unknown) => boolean {
  let sprung = false;
  return (path, answer) => !sprung && springsOn(path, answer) && (sprung = true);
}

export function withRealpathTrap<T>(trap: RealpathTrap, body: () => Promise<T>): Promise<T> {
  const springs = once((path, answer) => typeof answer === "string" && trap.springsOn(path, answer));
  const real = realpathSync.native;
  const trapped = ((...args: Parameters<typeof real>) => {
    const answer = real(...args);
    if (springs(String(args[0]), answer)) trap.move(String(args[0]), answer as string);
    return answer;
  }) as typeof real;
  return withTrapOn(
    "realpath",
    {
      springsOn: springs,
      move: async (path, answer) => trap.move(path, answer as string),
      set: () => (realpathSync.native = trapped),
      unset: () => (realpathSync.native = real),
    },
    body,
  );
}

export function withMkdirTrap<T>(trap: MkdirTrap, body: () => Promise<T>): Promise<T> {
  return withTrapOn("mkdir", { springsOn: once((path) => trap.springsOn(path)), move: (path) => trap.move(path) }, body);
}

type Trappable = "realpath" | "mkdir";

interface Trap {
  /** Already limited to one move (`once`). */
  springsOn(path: string, answer: unknown): boolean;
  move(path: string, answer: unknown): Promise<void>;
  /** Other forms of the call to trap beside the `node:fs/promises` one, and to put back. */
  set?(): void;
  unset?(): void;
}

type AnyCall = (...args: unknown[]) => Promise<unknown>;

// `fs.promises` is the object whose properties Node copies into the `node:fs/promises` ESM exports.
const patchable = fsPromises as unknown as Record<Trappable, AnyCall>;
let trapSet = false;

async function withTrapOn<T>(name: Trappable, trap: Trap, body: () => Promise<T>): Promise<T> {
  if (trapSet) throw new Error("a trap on node:fs/promises is already set in this process");
  const real = patchable[name];
  const trapped: AnyCall = async (...args) => {
    const answer = await real(...args);
    if (trap.springsOn(String(args[0]), answer)) await trap.move(String(args[0]), answer);
    return answer;
  };
  trapSet = true;
  patchable[name] = trapped;
  trap.set?.();
  syncBuiltinESMExports();
  try {
    return await body();
  } finally {
    patchable[name] = real;
    trap.unset?.();
    syncBuiltinESMExports();
    trapSet = false;
  }
}
