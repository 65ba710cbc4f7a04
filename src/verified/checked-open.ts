/**
 * Gate 3 twice: the chapter's `workspacePath` check, then the descriptor walk that does not trust it.
 *
 * Promises: a path the chapter refuses is refused with the chapter's message before anything is
 * opened; a path it accepts is opened by `openBeneath` from the pinned root, so what changed since the
 * check (a TOCTOU swap) cannot carry the open outside. Both use the pinned root's current real path.
 * An absolute request may spell the root as the caller handed it over (`/tmp/ws/x` for a root pinned at
 * `/private/tmp/ws`); while that path still leads to the pinned root, the walk takes the rest from there.
 * `fsApi` reaches the first check only: it is how tests and the TOCTOU demo inject a swap right after
 * the check, exactly as they do for the chapter's tools, and a lying `fsApi` cannot open the boundary.
 */
import { type FileHandle, realpath } from "node:fs/promises";
import { relative } from "node:path";
import { isInside } from "../gates/is-inside.js";
import { type FsApi, workspacePath } from "../gates/workspace-path.js";
import { type OpenIntent, openBeneath } from "./open-beneath.js";
import type { PinnedRoot } from "./pinned-root.js";
import type { HardlinkPolicy } from "./verify-opened.js";

export interface VerifiedSettings extends HardlinkPolicy {
  fsApi?: FsApi | undefined;
}

export async function openChecked(root: PinnedRoot, candidate: string, intent: OpenIntent, settings: VerifiedSettings): Promise<FileHandle> {
  const rootReal = await root.currentPath();
  const target = await workspacePath(rootReal, candidate, intent === "write", settings.fsApi);
  return openBeneath(root, rootReal, await beneathRoot(root, rootReal, target), intent, settings);
}

/** The checked path relative to the root, through the caller's spelling of the root when it uses that. */
async function beneathRoot(root: PinnedRoot, rootReal: string, target: string): Promise<string> {
  const throughGiven = !isInside(rootReal, target) && isInside(root.givenPath, target);
  // Only while the caller's spelling still leads to the pinned root; otherwise the walk refuses the climb.
  if (throughGiven && (await realpath(root.givenPath).catch(() => undefined)) === rootReal) return relative(root.givenPath, target);
  return relative(rootReal, target);
}
