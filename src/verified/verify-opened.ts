/**
 * The checks a verified tool makes on the descriptor it opened, before it reads or changes a byte.
 *
 * Promises: `verifyOpened` throws `path escapes workspace` unless the kernel reports the descriptor's
 * current path inside `rootReal`; throws `not a regular file` for directories, FIFOs, devices and
 * sockets; and, unless the policy allows hardlinks, throws for a file with more than one link, since
 * any other name of it may be outside the workspace and no check can say where.
 * Does not promise: that a file with one link was never outside (an attacker with write access
 * outside can move a file in; that is a rename, not a link), or anything about a bind mount, through
 * which an outside file reports an inside path.
 */
import type { FileHandle } from "node:fs/promises";
import { isInside } from "../gates/is-inside.js";
import { openedPath } from "./proc-fd.js";
import { ESCAPE_MESSAGE, NOT_REGULAR_FILE } from "../gates/messages.js";


export interface HardlinkPolicy {
  /** Accept files with more than one hard link (off by default: another link may be outside). */
  allowHardlinks: boolean;
}

export function hardlinkRefusal(links: number): string {
  return `refused: the file has ${links} hard links, and another of them may be outside the workspace (allowHardlinks accepts this)`;
}

export async function verifyOpened(handle: FileHandle, rootReal: string, policy: HardlinkPolicy): Promise<void> {
  if (!isInside(rootReal, await openedPath(handle.fd))) throw new Error(ESCAPE_MESSAGE);
  const stats = await handle.stat();
  if (!stats.isFile()) throw new Error(NOT_REGULAR_FILE);
  if (stats.nlink > 1 && !policy.allowHardlinks) throw new Error(hardlinkRefusal(stats.nlink));
}

/** Directories get the containment check only: their link count is their number of subdirectories. */
export async function verifyDirectory(handle: FileHandle, rootReal: string): Promise<void> {
  if (!isInside(rootReal, await openedPath(handle.fd))) throw new Error(ESCAPE_MESSAGE);
}
