/**
 * The attacker's perfect timing, arranged from outside the tools: while `body` runs, this process's
 * `node:fs/promises` `realpath` is replaced by one that computes the true answer and then, the first
 * time that answer is one the trap is set for, runs the attacker's move before handing the answer
 * back. The tool under attack receives a correct answer that is already stale, which is exactly the
 * TOCTOU window, made as wide as the move needs. The tools' code is not touched: they import
 * `node:fs/promises` as usual, and `syncBuiltinESMExports` makes their ESM bindings see the swap.
 * It is the kit's one way of placing a move after a check: the deterministic demo and the tests'
 * swap scenarios (fixtures/swap-scenarios.ts) both use it, against tools built without options.
 *
 * Promises: the real `realpath` is back in place (for `require` and ESM importers alike) when `body`
 * settles, whether it resolves or throws; the move runs at most once, and only after a call that
 * succeeded; calls the trap is not set for pass through unchanged; only one trap can be set at a time
 * in a process (a second one throws instead of stacking).
 * Does not promise: to see checks made any other way (`fs.realpath` with a callback, `realpathSync`,
 * `readlink`, a descriptor); a tool set that checks that way is reported as never checked, not as
 * safe. Paths given as a URL or Buffer are passed to `springsOn` as `String(path)`.
 */
import { promises as fsPromises } from "node:fs";
import { syncBuiltinESMExports } from "node:module";

type Realpath = typeof fsPromises.realpath;

export interface RealpathTrap {
  /** Whether the attacker moves after this call: its argument and its true answer. */
  springsOn(path: string, answer: string): boolean;
  /** The attacker's move; the caller of `realpath` waits for it, then gets the (stale) answer. */
  move(path: string, answer: string): Promise<void>;
}

// `fs.promises` is the object whose properties Node copies into the `node:fs/promises` ESM exports.
const patchable = fsPromises as unknown as { realpath: Realpath };
let trapSet = false;

export async function withRealpathTrap<T>(trap: RealpathTrap, body: () => Promise<T>): Promise<T> {
  if (trapSet) throw new Error("a realpath trap is already set in this process");
  const realRealpath = patchable.realpath;
  let sprung = false;
  const trapped = async (...args: Parameters<Realpath>) => {
    const answer = await realRealpath(...args);
    if (!sprung && typeof answer === "string" && trap.springsOn(String(args[0]), answer)) {
      sprung = true;
      await trap.move(String(args[0]), answer);
    }
    return answer;
  };
  trapSet = true;
  patchable.realpath = trapped as Realpath;
  syncBuiltinESMExports();
  try {
    return await body();
  } finally {
    patchable.realpath = realRealpath;
    syncBuiltinESMExports();
    trapSet = false;
  }
}
