/**
 * Pins a change outside the workspace on the call that made it.
 *
 * Promises: for a failure whose consequence is `outside changed`, `pinOutsideChange` does the case
 * again with only its first calls (the rest refused as past a deadline, surface.ts `limit`), each time
 * in a sandbox as new, and compares the canaries however the case ended (property.ts,
 * `seeingOutside`). Halving between a prefix that changed nothing (none of the calls) and one that
 * changed the outside, it ends on a call N whose first N calls change the outside and whose first
 * N - 1 do not: the violation then names call N, with what its prefix changed. A violation that named
 * that call already is kept as it is. Only a failure pays for it: some log2(calls) cases, once the
 * counterexample is shrunk, and none for a passing run.
 * Does not promise: a pin for a case that does not change the outside again when done again with all
 * its calls (a target that answers otherwise from one run to the next): its violation is kept.
 */
import type { AuditProperty } from "./property.js";
import { Violation, seeingOutside } from "./property.js";
import { type SentCall, type Transcript, transcribing } from "../../operations/surface.js";
import type { AuditTarget } from "../../operations/target.js";

/** An export whose call makes the tools (the counterexample's `tools:` line), not a call of the case. */
const makesTools = (call: SentCall) => call.via === "export" && call.name === "createWorkspaceTools";

/**
 * The violation naming the call after which the outside first changed, or `error` itself when it
 * named that call already, changed nothing, or the case does not change the outside again.
 * `bounded` bounds one try (the case's timeout).
 */
export async function pinOutsideChange<T>(
  property: AuditProperty<T>,
  target: AuditTarget,
  value: T,
  error: Violation,
  bounded: (attempt: Promise<string[]>) => Promise<string[] | undefined>,
): Promise<Violation> {
  const made = error.made;
  if (made === undefined || made === 0) return error;
  let sent: SentCall[] = [];
  const outsideAfter = async (limit: number): Promise<string[]> => {
    const transcript: Transcript = { sent: [], sandboxes: [], limit };
    const changes = (await bounded(seeingOutside(() => transcribing(transcript, () => property.check(target, value))))) ?? [];
    if (changes.length > 0) sent = transcript.sent;
    return changes;
  };
  let changed = await outsideAfter(made);
  if (changed.length === 0) return error;
  // The first `low` calls changed nothing (none, at first); the first `high` changed the outside.
  let [low, high] = [0, made];
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    const changes = await outsideAfter(middle);
    if (changes.length > 0) [high, changed] = [middle, changes];
    else low = middle;
  }
  const pinned = sent[high - 1];
  // A prefix that ends on the making of the tools names no call of the case.
  if (pinned === undefined || makesTools(pinned)) return error;
  const index = sent.slice(0, high).filter((call) => !makesTools(call)).length - 1;
  if (error.brokenAt === index) return error;
  // A later call the case blamed is said too: the canaries after all the calls say nothing more.
  const first = index === 0 ? "its first call" : `its first ${index + 1} calls`;
  const later = typeof error.brokenAt === "number" ? `\nthe case first saw it at call ${error.brokenAt + 1}: ${error.message}` : "";
  return new Violation(
    `${pinned.name} (call ${index + 1}) changed outside the workspace: done again with ${first} only, the case changes the outside, and with one fewer it does not:\n  ${changed.join("\n  ")}${later}`,
    "outside changed",
    index,
    high,
  );
}
