/**
 * Side effects outside the workspace: what a tool set changed beside the workspace, counted apart
 * from content escapes. A write that is refused after it already created an empty file or a directory
 * outside leaks no content, and is still a broken boundary; this is where the demo shows it.
 *
 * Promises: `sideEffectsOf` sorts every change the sandbox reports outside the workspace and its
 * scratch directory (sandbox.ts `outsideChanges`) into directories, empty files, files with content and
 * everything else (a canary changed or removed, a link, a special file), keeps the total, and quotes
 * the first `EXAMPLES` changes as paths shown beside the workspace. `sideEffectsSince` counts only
 * the changes that were not already there in an earlier list, so one scenario's effects are not
 * charged to the next.
 * Does not promise: to see anything outside the sandbox, or an effect that was undone before it
 * looked (a file created outside and removed again in the same instant is not counted; a canary that
 * was rewritten and then changed again counts once).
 */
import { type OutsideChange, type Sandbox, displayPath } from "../sandbox/sandbox.js";

export interface SideEffects {
  total: number;
  directories: number;
  emptyFiles: number;
  filesWithContent: number;
  /** Canaries changed or removed, links, special files. */
  other: number;
  /** The first few changes, e.g. `added outside/dir/escape-7.txt (file, 44 bytes)`. */
  examples: string[];
}

const EXAMPLES = 5;

export const NO_SIDE_EFFECTS: SideEffects = { total: 0, directories: 0, emptyFiles: 0, filesWithContent: 0, other: 0, examples: [] };

export async function sideEffectsOf(box: Sandbox): Promise<SideEffects> {
  return summarize(box, await box.outsideChanges());
}

/** The changes outside now that `earlier` (an `outsideChanges()` answer) did not already hold. */
export async function sideEffectsSince(box: Sandbox, earlier: readonly OutsideChange[]): Promise<SideEffects> {
  const seen = new Set(earlier.map(changeKey));
  return summarize(box, (await box.outsideChanges()).filter((change) => !seen.has(changeKey(change))));
}

function summarize(box: Sandbox, changes: readonly OutsideChange[]): SideEffects {
  const effects = { ...NO_SIDE_EFFECTS, total: changes.length, examples: changes.slice(0, EXAMPLES).map((change) => describe(box, change)) };
  for (const { change, now } of changes) {
    if (change !== "added") effects.other += 1;
    else if (now.kind === "directory") effects.directories += 1;
    else if (now.kind === "file" && now.bytes === 0) effects.emptyFiles += 1;
    else if (now.kind === "file") effects.filesWithContent += 1;
    else effects.other += 1;
  }
  return effects;
}

function describe(box: Sandbox, { change, path, now }: OutsideChange): string {
  const state =
    now.kind === "file" ? `file, ${now.bytes} bytes` : now.kind === "symlink" ? `symlink -> ${now.target}` : now.kind === "special" ? "special file" : now.kind;
  return `${change} ${displayPath(box, path)} (${state})`;
}

function changeKey({ change, path, now }: OutsideChange): string {
  return JSON.stringify([change, path, now]);
}

/** One line for people: `none`, or the total and each kind that occurred. */
export function describeSideEffects(effects: SideEffects): string {
  if (effects.total === 0) return "none";
  const kinds = (
    [
      [effects.filesWithContent, "file with content", "files with content"],
      [effects.emptyFiles, "empty file", "empty files"],
      [effects.directories, "directory", "directories"],
      [effects.other, "other change", "other changes"],
    ] as const
  )
    .filter(([count]) => count > 0)
    .map(([count, one, many]) => `${count} ${count === 1 ? one : many}`);
  return `${effects.total} (${kinds.join(", ")})`;
}
