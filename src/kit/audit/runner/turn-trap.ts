/**
 * A swap placed inside one call, at a moment fixed by the event loop rather than by the clock: after the
 * call's path check, at the first moment the call waits (it yields to the event loop) with none of the
 * file-system calls it started since the check still under way. A tool that checks a path and uses it
 * in the same turn (the chapter's: a synchronous check, then an `open` dispatched at once) has its use
 * dispatched, and answered, before the swap; one that awaits anything between its check and its use
 * (an `fs.promises.stat`, a `setImmediate`, a timer) uses the path after it, as a racer would win it.
 *
 * While `body` runs, this process's `realpathSync.native` (the one the chapter's check calls) and
 * `node:fs/promises`' `realpath` are replaced by ones that answer truly and note the first call
 * `springsOn` accepts as the check; every function of `node:fs/promises` is counted while it runs, when
 * it started after the check. The move runs once: when a `setImmediate` queued at the check fires (so
 * before any immediate the tool queued after it) or when a counted call has answered (before its
 * caller resumes), whichever comes first with no counted call under way. `syncBuiltinESMExports`
 * makes ESM importers of `node:fs/promises` see the counted functions.
 *
 * Promises: the real functions are back (for `require` and ESM importers alike) when `body` settles;
 * the move runs at most once, never before the check, never while a counted call is under way, never
 * after `body` settled (a call that never waited is not moved under); only
 * one trap can be set at a time (a second one throws). The moment depends on the order of events on
 * this thread, never on how long anything takes: a loaded machine moves it nowhere.
 * Does not promise: to see a check made any other way (the callback form, the JS `realpathSync`, a
 * descriptor), nor to count a use made through the callback or synchronous API: such a tool is not
 * attacked (`sprung` says whether the check was seen), never passed as safe by this trap alone.
 */
import { promises as fsPromises, realpathSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";

export interface TurnTrap {
  /** Whether this realpath (its argument and its true answer) is the call's check. */
  springsOn(path: string, answer: string): boolean;
  /** The attacker's move, synchronous. */
  move(): void;
}

type AnyCall = (...args: unknown[]) => unknown;
const patchable = fsPromises as unknown as Record<string, AnyCall>;
let trapSet = false;

/** `body` under the trap; answers its answer and whether the check was seen and the move made. */
export async function withTurnTrap<T>(trap: TurnTrap, body: () => Promise<T>): Promise<{ answer: T; checked: boolean; moved: boolean }> {
  if (trapSet) throw new Error("a turn trap is already set in this process");
  let checked = false;
  let turned = false;
  let moved = false;
  let underWay = 0;
  // Once `body` has settled, its call is over: an immediate that fires later moves nothing.
  let over = false;
  const tryMove = () => {
    if (over || !checked || moved || !turned || underWay > 0) return;
    moved = true;
    trap.move();
  };
  const noteCheck = (path: unknown, answer: unknown) => {
    if (checked || typeof answer !== "string" || !trap.springsOn(String(path), answer)) return;
    checked = true;
    setImmediate(() => {
      turned = true;
      tryMove();
    });
  };
  const realNative = realpathSync.native;
  const originals = Object.entries(patchable).filter(([, value]) => typeof value === "function");
  const counted = (name: string, real: AnyCall): AnyCall =>
    async (...args: unknown[]) => {
      const started = checked;
      if (started) underWay += 1;
      try {
        const answer = await real(...args);
        if (name === "realpath") noteCheck(args[0], answer);
        return answer;
      } finally {
        if (started) {
          underWay -= 1;
          turned = true;
          tryMove();
        }
      }
    };
  trapSet = true;
  realpathSync.native = ((...args: Parameters<typeof realNative>) => {
    const answer = realNative(...args);
    noteCheck(args[0], answer);
    return answer;
  }) as typeof realNative;
  for (const [name, real] of originals) patchable[name] = counted(name, real);
  syncBuiltinESMExports();
  try {
    const answer = await body();
    return { answer, checked, moved };
  } finally {
    over = true;
    for (const [name, real] of originals) patchable[name] = real;
    realpathSync.native = realNative;
    syncBuiltinESMExports();
    trapSet = false;
  }
}
