/**
 * Values as a report must show them: unambiguous, one line, copyable.
 *
 * Promises: `showValue` writes strings JSON-escaped (a newline reads `\n`, never a line break), and an
 * object whose prototype is not Object's, null's or Array's as
 * `Object.assign(Object.create(Boolean.prototype), {...})`, never `[object Object]`; anything else as
 * fast-check's `stringify` does (boxed values, dates, symbols, `-0`). `showDifference` names the first
 * character where two texts differ, with a short escaped window of each around it.
 */
import fc from "fast-check";

export function showValue(value: unknown): string {
  if (typeof value !== "object" || value === null) return fc.stringify(value);
  const prototype: unknown = Object.getPrototypeOf(value);
  if (Array.isArray(value) && prototype === Array.prototype) return `[${Array.from(value, showValue).join(",")}]`;
  const fields = (nullPrototype: boolean) =>
    `{${[...(nullPrototype ? ["__proto__:null"] : []), ...Reflect.ownKeys(value).map((key) => `${showKey(key)}:${showValue((value as Record<PropertyKey, unknown>)[key])}`)].join(",")}}`;
  if (prototype === Object.prototype || prototype === null) return fields(prototype === null);
  // A built-in (boxed value, Date, Map, …) has an internal tag fast-check knows how to write.
  if (Object.prototype.toString.call(value) !== "[object Object]") return fc.stringify(value);
  const name = (prototype as { constructor?: { name?: unknown } }).constructor?.name;
  return `Object.assign(Object.create(${typeof name === "string" && name !== "" ? name : "(anonymous)"}.prototype), ${fields(false)})`;
}

function showKey(key: string | symbol): string {
  return typeof key === "symbol" ? `[${fc.stringify(key)}]` : JSON.stringify(key);
}

/** Where `actual` first departs from `expected`, e.g. `at character 8000: expected "\n[trunc…", got "[trunc…"`. */
export function showDifference(expected: string, actual: string, window = 32): string {
  let index = 0;
  while (index < expected.length && index < actual.length && expected[index] === actual[index]) index++;
  const around = (text: string) => (index >= text.length ? "(end of text)" : JSON.stringify(text.slice(index, index + window)) + (text.length > index + window ? "…" : ""));
  return `at character ${index} of ${expected.length}: expected ${around(expected)}, got ${around(actual)} (${actual.length} characters)`;
}
