/**
 * Parent steps (`..`) placed among other components, at most `maxParentSteps` of them by construction:
 * a broken implementation that opens raw paths must still land inside the sandbox's guard directories.
 */
import fc from "fast-check";

export interface ClimbConstraints {
  /** The most `..` components the answer holds (inclusive). */
  maxParentSteps: number;
}

/** `parts` with up to `maxParentSteps` `..` components inserted at any positions. */
export function withClimbs(parts: fc.Arbitrary<readonly string[]>, { maxParentSteps }: ClimbConstraints): fc.Arbitrary<string[]> {
  return fc.tuple(parts, fc.array(fc.nat(), { maxLength: maxParentSteps })).map(([names, positions]) => {
    const out = [...names];
    for (const position of positions) out.splice(position % (out.length + 1), 0, "..");
    return out;
  });
}

/** How many `..` components a path holds, for the one promise every candidate arbitrary keeps. */
export function parentSteps(text: string): number {
  return text.split(/[\\/]/).filter((part) => part === "..").length;
}
