/**
 * The last step of a verified open: check the descriptor, and when the check refuses it, take back
 * what this call created.
 *
 * Promises: `verifyOrUndo` runs `verify`; when that throws, it closes the handle and, if `undo` is
 * given (this call created the entry), removes the entry through its directory descriptor, but only
 * while the name still denotes the object the handle holds (same device and inode), then rethrows the
 * refusal. An entry already gone is fine, and so is a directory that is no longer empty: this call
 * puts nothing in a directory before it passes, so entries in it are someone else's, and it is left
 * alone. An entry that cannot be removed for any other reason turns the refusal into an error that
 * says so, with both reasons.
 * Does not promise: that the handle holds what this call created when the entry is a directory. A
 * file is created and opened in one step (`O_CREAT|O_EXCL`), but a directory is made by `mkdir` and
 * then opened by name, and Node has no way to do both at once: a process that can rename entries at
 * that name can put its own directory there in between, and if that directory is empty and refused,
 * it is removed (which that process could do itself). Nor does it remove what a refused call created
 * inside the workspace on its way (directories stay, as with `mkdir -p`).
 */
import type { Stats } from "node:fs";
import { type FileHandle, lstat } from "node:fs/promises";
import { failure } from "../gates/failure.js";
import { errorCode, reword } from "./proc-fd.js";
import type { Entry } from "./walk.js";

export async function verifyOrUndo(
  handle: FileHandle,
  entry: Entry,
  verify: () => Promise<void>,
  undo: ((path: string) => Promise<void>) | undefined,
): Promise<void> {
  try {
    await verify();
  } catch (refusal) {
    try {
      // Linux lets an open file be unlinked and an open directory be removed, so the handle can wait.
      if (undo !== undefined) await undoCreation(entry, await handle.stat(), undo, refusal);
    } finally {
      await handle.close();
    }
    throw refusal;
  }
}

async function undoCreation(entry: Entry, identity: Stats, undo: (path: string) => Promise<void>, refusal: unknown): Promise<void> {
  try {
    const now = await lstat(entry.proc);
    if (now.dev === identity.dev && now.ino === identity.ino) await undo(entry.proc);
  } catch (error) {
    // ENOENT: already gone. ENOTEMPTY: holds entries this call did not make (see above), so not ours.
    const code = errorCode(error);
    if (code === "ENOENT" || code === "ENOTEMPTY") return;
    const why = failure(reword(error, entry.proc, entry.logical)).content;
    throw new Error(`${failure(refusal).content}; what this call created at ${entry.logical} could not be removed: ${why}`);
  }
}
