/**
 * Gate 3 twice: the chapter's `workspacePath` check, then the descriptor walk that does not trust it.
 *
 * Promises: a path the chapter refuses is refused with the chapter's message before anything is
 * opened; a path it accepts is opened by `openBeneath` from the pinned root, so what changed since the
 * check (a TOCTOU swap) cannot carry the open outside. Both use the pinned root's current real path.
 * `fsApi` reaches the first check only: it is how tests and the TOCTOU demo inject a swap right after
 * the check, exactly as they do for the chapter's tools, and a lying `fsApi` cannot open the boundary.
 */
import type { FileHandle } from "node:fs/promises";
import { relative } from "node:path";
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
  return openBeneath(root, rootReal, relative(rootReal, target), intent, settings);
}
