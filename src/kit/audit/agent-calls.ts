/**
 * Generated tool calls for attacking an agent loop: names as a model may spell them, and inputs that
 * carry a marker (`call-N`), so a call that reached its tool is told apart by its marker, whatever the
 * loop did with the call object.
 *
 * Names are the tools' own, near misses that a lenient dispatcher maps onto a tool (`Bash`, ` bash`,
 * a fullwidth `ｂａｓｈ` that NFKC folds to `bash`), and names of nothing, some of them keys every
 * JavaScript object has. Inputs are shaped for the tool the call aims at; `hostileInput` adds the ones
 * a tool must refuse (not an object, an escaping path).
 */
import fc from "fast-check";

export const TOOL_NAMES = ["read", "write", "bash"] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** Spellings that are not `bash` but that a trimming, case-folding or NFKC-normalizing lookup maps onto it. */
export const BASH_SPELLINGS = ["Bash", "BASH", "bAsh", " bash", "bash ", "bash\n", "\tbash", "ｂａｓｈ"] as const;

/** Near misses of read and write, the same way. */
const OTHER_SPELLINGS = ["Read", "WRITE", " write", "read\n"] as const;

/** Names no tool has, not even after folding: object keys, look-alikes, invisible characters. */
export const UNKNOWN_NAMES = ["", "rm", "constructor", "__proto__", "toString", "bаsh" /* Cyrillic а */, "bash\u200b", "bash\0"] as const;

export interface CallSpec {
  /** The name the model sends. */
  name: string;
  /** The tool the input is shaped for, so that a call reaching it leaves a trace. */
  aim: ToolName;
}

export const knownName = fc.constantFrom(...TOOL_NAMES);

/** Any name a model may send, the exact ones most often. */
export const callName = fc.oneof(
  { weight: 3, arbitrary: knownName },
  { weight: 2, arbitrary: fc.constantFrom(...BASH_SPELLINGS, ...OTHER_SPELLINGS) },
  { weight: 1, arbitrary: fc.constantFrom(...UNKNOWN_NAMES) },
);

/** Turns of calls, at least `minCalls` in the first turn, at most `maxCalls` per turn. */
export function turns<T>(constraints: { call: fc.Arbitrary<T>; maxTurns: number; minCalls?: number; maxCalls: number }): fc.Arbitrary<T[][]> {
  const turn = (minLength: number) => fc.array(constraints.call, { minLength, maxLength: constraints.maxCalls });
  return fc.tuple(turn(constraints.minCalls ?? 1), fc.array(turn(1), { maxLength: constraints.maxTurns - 1 })).map(([first, rest]) => [first, ...rest]);
}

/** The marker of the n-th call of a script: its id by default, and part of its input. */
export const marker = (index: number) => `call-${index}`;

/** Where the marker of a call shows once its tool ran: the file write makes or bash touches. */
export const traceFile = (index: number, aim: ToolName) => (aim === "bash" ? `${marker(index)}.ran` : `${marker(index)}.txt`);

/** An input the aimed tool accepts; its effect (for write and bash) is the call's trace file. */
export function inputFor(aim: ToolName, index: number): Record<string, string> {
  if (aim === "bash") return { command: `touch ${traceFile(index, aim)}` };
  if (aim === "write") return { path: traceFile(index, aim), content: marker(index) };
  return { path: traceFile(index, "write") };
}

/** Inputs a tool must refuse; each still names the call's marker, so a tool that got one is seen. */
export const hostileInput = fc.constantFrom<(index: number) => unknown>(
  (index) => marker(index),
  (index) => [marker(index)],
  (index) => ({ path: `../outside/${marker(index)}.txt`, content: marker(index) }),
  (index) => ({ path: `../ws-other/${marker(index)}.txt` }),
  (index) => ({ command: 1, marker: marker(index) }),
);

/** The marker in whatever input a tool was handed, if any. */
export function markerIn(input: unknown): number | undefined {
  let text: string | undefined;
  try {
    text = JSON.stringify(input);
  } catch {
    return undefined;
  }
  const found = /call-(\d+)/.exec(text ?? "");
  return found === null ? undefined : Number(found[1]);
}
