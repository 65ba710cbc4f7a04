/**
 * The workspace root held by a descriptor for the lifetime of a verified tool set.
 *
 * Promises: `pinRoot(root)` opens `root` (following the symlinks in that caller-given path once) as a
 * directory, synchronously, so construction fails at once when the root is not an openable directory.
 * From then on the tools walk from this descriptor, so re-pointing or replacing the path `root` does
 * not move the workspace; `currentPath()` is where the pinned directory is now, by the kernel's answer.
 * The descriptor is closed when the last tool holding the pin becomes unreachable.
 * Does not promise: that the directory stays where it was (a rename moves it, and `currentPath()`
 * follows), or a deterministic close: one descriptor per tool set stays open until garbage collection.
 */
import { closeSync, constants, openSync, readlinkSync } from "node:fs";
import { descriptorLink, openedPath } from "./proc-fd.js";

export interface PinnedRoot {
  readonly fd: number;
  /** The real path of the root when it was pinned; bash runs there. */
  readonly pinnedPath: string;
  currentPath(): Promise<string>;
}

// Closing on collection rather than never: callers build tool sets per workspace (the audit builds
// hundreds) and the contract `Tool[]` has no close method to call.
const closeOnCollect = new FinalizationRegistry<number>((fd) => {
  try {
    closeSync(fd);
  } catch {
    // Nothing can be reported from a finalizer; a failed close leaks one descriptor.
  }
});

export function pinRoot(root: string): PinnedRoot {
  const fd = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY);
  let pinnedPath: string;
  try {
    pinnedPath = readlinkSync(descriptorLink(fd));
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  const pinned: PinnedRoot = { fd, pinnedPath, currentPath: () => openedPath(fd) };
  closeOnCollect.register(pinned, fd);
  return pinned;
}
