/**
 * Gate 2 of the chapter: the run-time field check. Model input is untrusted whatever the schema says,
 * so every executor reads its fields through `stringField`.
 *
 * Promises: `asObject` answers a record only for plain objects (not null, not arrays, not primitives);
 * `stringField` answers the field only when it is an own property holding a `string` (the empty
 * string included; an inherited property is not the caller's input), and never throws: a field that
 * cannot be read (a getter or proxy that throws) is not a string, so the tool answers with its
 * invalid-input message instead of rejecting.
 * Does not promise: any meaning. An empty path or a NUL byte passes here; rules about content belong
 * to the executor and to `workspacePath`.
 *
 * `callerSignal` is the same check for the signal the caller hands to `execute`: absent, or a real
 * AbortSignal. A look-alike (`{ aborted: false }`) can never fire, so a tool given one would run
 * unstoppable; it throws `signal must be an AbortSignal` instead, before anything is done.
 */
import { INVALID_SIGNAL } from "./messages.js";

export function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

export function stringField(input: unknown, field: string): string | undefined {
  let value: unknown;
  try {
    const object = asObject(input);
    // Own properties only: a field planted on Object.prototype must not turn `{}` into a valid call.
    value = object !== undefined && Object.hasOwn(object, field) ? object[field] : undefined;
  } catch {
    // Only in-process code (an approval hook's substitute) can hand over such an input; JSON cannot.
    // `value` stays undefined, which is not a string.
  }
  return typeof value === "string" ? value : undefined;
}

export function callerSignal(signal: unknown): AbortSignal | undefined {
  if (signal === undefined || signal instanceof AbortSignal) return signal;
  throw new TypeError(INVALID_SIGNAL);
}
