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
 */

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
