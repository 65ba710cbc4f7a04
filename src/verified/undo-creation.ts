/**
 * The last step of a verified open: check the descriptor, and when the check refuses it, take back
 * what this call created.
 *
 * Promises: `verifyOrUndo` runs `verify`; when that throws, it closes the handle and, if `undo` is
 * given (this call created the entry), removes the entry through its directory descriptor, but only
 * while the name still denotes the very object created (same device and inode), then rethrows the
 * refusal. An entry already gone is fine; one that cannot be removed turns the refusal into an error
 * that says so, with both reasons.
 * Does not promise: to remove anything this call did not create, or what a refused call created inside
 * the workspace on its way (directories stay, as with `mkdir -p`).
 */
import type { Stats } from "node:fs";
import { type FileHandle, lstat } from "node:fs/promises";
import { failure } from "../failure.js";
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
    if (errorCode(error) === "ENOENT") return;
    const why = failure(reword(error, entry.proc, entry.logical)).content;
    throw new Error(`${failure(refusal).content}; what this call created at ${entry.logical} could not be removed: ${why}`);
  }
}
