/**
 * Ctrl-C for a command that must clean up after itself: while the guard is installed, SIGINT and
 * SIGTERM abort its signal instead of killing the process, so the command can stop its racer and
 * remove its temp directory before it returns.
 *
 * Promises: the first such signal aborts `signal` and is remembered (`exitCode()` is then 128 + its
 * number, 130 for SIGINT, as a shell reports it); later ones are ignored while the command cleans up,
 * which is bounded; `dispose()` removes exactly the listeners the guard added, after which the process
 * reacts to these signals as before.
 * Does not promise: any cleanup on SIGKILL or a crash; nothing in the process can do that.
 */
import { constants } from "node:os";

const GUARDED: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM"];

export interface InterruptGuard {
  signal: AbortSignal;
  /** 128 + the signal number once interrupted; undefined before. */
  exitCode(): number | undefined;
  dispose(): void;
}

export function guardInterrupts(): InterruptGuard {
  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  // One listener per signal, closing over its name: the argument Node passes is not relied on.
  const listeners = GUARDED.map((name) => {
    const listener = () => {
      if (received !== undefined) return;
      received = name;
      controller.abort(new Error(`interrupted by ${name}`));
    };
    process.on(name, listener);
    return [name, listener] as const;
  });
  return {
    signal: controller.signal,
    exitCode: () => (received === undefined ? undefined : 128 + constants.signals[received]),
    dispose() {
      for (const [name, listener] of listeners) process.off(name, listener);
    },
  };
}
