/**
 * Values as a report must show them: unambiguous, one line, and pasted into a call, the same value.
 *
 * Promises: `showValue` writes a JavaScript expression that evaluates to an equal value (the same
 * own fields, prototype and primitive values), given `$BOX` bound to the sandbox's path:
 * - strings JSON-escaped (a newline reads `\n`, never a line break); a run of one short piece
 *   repeated into a long string folded as `"abc/".repeat(1099)`; each sandbox path named in `boxes`
 *   written `$BOX` (`$BOX + "/ws-other/secret.txt"`);
 * - an array as a literal, or, when it holds holes or fields beside its elements,
 *   `Object.assign([…], {"path":…})`, never as `[]` alone;
 * - an object whose prototype is not Object's, null's or Array's as
 *   `Object.assign(Object.create(Boolean.prototype), {...})`, never `[object Object]`;
 * - anything else as fast-check's `stringify` does (boxed values, dates, symbols, `-0`, and a
 *   function by what its `fc.toStringMethod` says, else its source).
 * `showDifference` names the first character where two texts differ, with a short escaped window of
 * each around it. `showAnswers` shows two answers whole when both are short, and otherwise the lines
 * in which they differ (`-` the first's, `+` the second's, each line escaped, the same lines
 * counted), as a line diff reads.
 * Does not promise: a function that closes over its scope reads back as it ran (its source is all
 * there is to show), nor identity (a value reached twice is written twice).
 */
import fc from "fast-check";

export interface ShowOptions {
  /** Absolute paths of the sandboxes the value was made in, each written `$BOX`. */
  boxes?: readonly string[];
}

/** How a report names the sandbox's path in an expression. */
export const BOX_VARIABLE = "$BOX";

export function showValue(value: unknown, options: ShowOptions = {}): string {
  if (typeof value === "string") return showString(value, options.boxes ?? []);
  // A value that says how it is written (fast-check's hook) is written so: `fsApi`, `() => "a"`.
  if (typeof value !== "object" || value === null || fc.toStringMethod in value) return fc.stringify(value);
  const show = (item: unknown) => showValue(item, options);
  const prototype: unknown = Object.getPrototypeOf(value);
  const fields = (keys: readonly (string | symbol)[], nullPrototype = false) =>
    `{${[...(nullPrototype ? ["__proto__:null"] : []), ...keys.map((key) => `${showKey(key)}:${show((value as Record<PropertyKey, unknown>)[key])}`)].join(",")}}`;
  if (Array.isArray(value) && prototype === Array.prototype) {
    const indices = Array.from({ length: value.length }, (_, index) => String(index));
    const extra = Reflect.ownKeys(value).filter((key) => key !== "length" && !(typeof key === "string" && indices.includes(key)));
    const holes = indices.some((index) => !Object.hasOwn(value, index));
    if (holes) return `Object.assign(Array(${value.length}), ${fields(Reflect.ownKeys(value).filter((key) => key !== "length"))})`;
    const literal = `[${Array.from(value, show).join(",")}]`;
    return extra.length === 0 ? literal : `Object.assign(${literal}, ${fields(extra)})`;
  }
  if (prototype === Object.prototype || prototype === null) return fields(Reflect.ownKeys(value), prototype === null);
  // A built-in (boxed value, Date, Map, …) has an internal tag fast-check knows how to write.
  if (Object.prototype.toString.call(value) !== "[object Object]") return fc.stringify(value);
  const name = (prototype as { constructor?: { name?: unknown } }).constructor?.name;
  return `Object.assign(Object.create(${typeof name === "string" && name !== "" ? name : "(anonymous)"}.prototype), ${fields(Reflect.ownKeys(value))})`;
}

function showKey(key: string | symbol): string {
  return typeof key === "symbol" ? `[${fc.stringify(key)}]` : JSON.stringify(key);
}

/** A run worth folding: at least this many characters, of a piece repeated at least `FOLD_MIN_REPEATS` times. */
const FOLD_MIN_LENGTH = 48;
const FOLD_MIN_REPEATS = 4;
/** The longest piece a fold looks for (`"abc/"` is 4). */
const FOLD_MAX_PIECE = 16;

/** A string as an expression: its sandbox paths as `$BOX`, its long repeated runs folded, the rest JSON. */
function showString(text: string, boxes: readonly string[]): string {
  const box = boxes.filter((path) => path !== "").sort((one, other) => other.length - one.length).find((path) => text.includes(path));
  if (box === undefined) return folded(text);
  return text
    .split(box)
    .map((part, index) => [...(index === 0 ? [] : [BOX_VARIABLE]), ...(part === "" ? [] : [showString(part, boxes)])])
    .flat()
    .join(" + ");
}

/** `"a".repeat(300)`, `"abc/".repeat(1099) + "abc"`: every long run of one repeated piece folded, the rest as JSON strings. */
function folded(text: string): string {
  const parts: string[] = [];
  let literal = "";
  for (let at = 0; at < text.length; ) {
    const run = longestRun(text, at);
    if (run === undefined) {
      literal += text[at];
      at += 1;
      continue;
    }
    if (literal !== "") parts.push(JSON.stringify(literal));
    literal = "";
    parts.push(`${JSON.stringify(run.piece)}.repeat(${run.count})`);
    at += run.piece.length * run.count;
  }
  if (literal !== "" || parts.length === 0) parts.push(JSON.stringify(literal));
  return parts.join(" + ");
}

function longestRun(text: string, at: number): { piece: string; count: number } | undefined {
  let best: { piece: string; count: number } | undefined;
  for (let size = 1; size <= FOLD_MAX_PIECE && at + size * FOLD_MIN_REPEATS <= text.length; size++) {
    const piece = text.slice(at, at + size);
    let count = 1;
    while (text.startsWith(piece, at + count * size)) count += 1;
    if (count >= FOLD_MIN_REPEATS && count * size >= FOLD_MIN_LENGTH && (best === undefined || count * size > best.count * best.piece.length)) best = { piece, count };
  }
  return best;
}

/** Where `actual` first departs from `expected`, e.g. `at character 8000: expected "\n[trunc…", got "[trunc…"`. */
export function showDifference(expected: string, actual: string, window = 32): string {
  let index = 0;
  while (index < expected.length && index < actual.length && expected[index] === actual[index]) index++;
  const around = (text: string) => (index >= text.length ? "(end of text)" : JSON.stringify(text.slice(index, index + window)) + (text.length > index + window ? "…" : ""));
  return `at character ${index} of ${expected.length}: expected ${around(expected)}, got ${around(actual)} (${actual.length} characters)`;
}

/** Answers up to this long are shown whole, one line each. */
const WHOLE_ANSWER = 160;
/** The most differing lines a diff shows. */
const DIFF_LINES = 24;

/**
 * Two answers as a reader compares them, under `labels` (`as the outside was`, `once it had changed`):
 * both whole when short; else the lines only the first has (`- `) and only the second has (`+ `), in
 * order, with how many lines they share.
 */
export function showAnswers(first: string, second: string, labels: readonly [string, string]): string {
  if (first.length <= WHOLE_ANSWER && second.length <= WHOLE_ANSWER) {
    const width = Math.max(...labels.map((label) => label.length));
    return [first, second].map((answer, index) => `\n  ${`${labels[index]}:`.padEnd(width + 1)} ${showValue(answer)}`).join("");
  }
  const changes = lineDiff(first.split("\n"), second.split("\n"));
  const differing = changes.filter((change) => change.sign !== " ");
  const same = changes.length - differing.length;
  const shown = differing.slice(0, DIFF_LINES).map((change) => `\n  ${change.sign} ${showValue(change.line)}`);
  const more = differing.length > DIFF_LINES ? [`\n  … and ${differing.length - DIFF_LINES} more lines that differ`] : [];
  return `\n  the lines that differ (- ${labels[0]}, + ${labels[1]}; ${same} line${same === 1 ? "" : "s"} the same):${shown.join("")}${more.join("")}`;
}

/** Above this many cells, the middle of a diff is shown as removed then added, without looking for common lines in it. */
const DIFF_CELLS = 1_000_000;

/** Each line of `one` and `other` in order, marked ` ` when both have it, `-` when only `one`, `+` when only `other` (a longest common subsequence). */
function lineDiff(one: readonly string[], other: readonly string[]): { sign: " " | "-" | "+"; line: string }[] {
  let start = 0;
  while (start < one.length && start < other.length && one[start] === other[start]) start++;
  let end = 0;
  while (end < one.length - start && end < other.length - start && one[one.length - 1 - end] === other[other.length - 1 - end]) end++;
  const [a, b] = [one.slice(start, one.length - end), other.slice(start, other.length - end)];
  const same = (lines: readonly string[]) => lines.map((line) => ({ sign: " " as const, line }));
  let middle: { sign: " " | "-" | "+"; line: string }[];
  if (a.length * b.length > DIFF_CELLS) middle = [...a.map((line) => ({ sign: "-" as const, line })), ...b.map((line) => ({ sign: "+" as const, line }))];
  else {
    // longest(i, j): the length of the longest common subsequence of a[i..] and b[j..].
    const width = b.length + 1;
    const table = new Uint32Array((a.length + 1) * width);
    const longest = (i: number, j: number) => table[i * width + j] as number;
    for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) table[i * width + j] = a[i] === b[j] ? longest(i + 1, j + 1) + 1 : Math.max(longest(i + 1, j), longest(i, j + 1));
    middle = [];
    let [i, j] = [0, 0];
    while (i < a.length || j < b.length) {
      if (i < a.length && j < b.length && a[i] === b[j]) {
        middle.push({ sign: " ", line: a[i] as string });
        i += 1;
        j += 1;
      } else if (i < a.length && (j === b.length || longest(i + 1, j) >= longest(i, j + 1))) {
        middle.push({ sign: "-", line: a[i] as string });
        i += 1;
      } else {
        middle.push({ sign: "+", line: b[j] as string });
        j += 1;
      }
    }
  }
  return [...same(one.slice(0, start)), ...middle, ...same(one.slice(one.length - end))];
}
