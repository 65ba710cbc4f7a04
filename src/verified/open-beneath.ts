/**
 * `openBeneath`: opens a file below the pinned root without ever letting the kernel follow a symlink,
 * a userland stand-in for `openat2(RESOLVE_BENEATH)`, which Node does not expose.
 *
 * Promises:
 * - Every open, mkdir and readlink names one component of a directory this walk holds open, starting
 *   from the root descriptor, through `/proc/self/fd/<dirfd>/<name>` with `O_NOFOLLOW`. A symlink
 *   swapped into the path at any moment is therefore seen, never followed by the kernel.
 * - A symlink met on the way is resolved here, as the kernel would, but inside the root: its target is
 *   put in front of the rest of the path and walked the same way; a relative target starts from the
 *   link's directory, an absolute one must spell the root's real path and restarts from the root
 *   descriptor. A `..` that would climb above the root, and an absolute target anywhere else, throw
 *   `path escapes workspace`; more than 40 symlinks throw ELOOP. No symlink ever leads an open outside.
 * - With intent "write", missing directories are created in the directory that holds them, and the
 *   leaf is opened without O_TRUNC: `O_CREAT|O_EXCL` when new, `O_NOFOLLOW|O_NONBLOCK` when it exists.
 *   With "read", the leaf is opened `O_RDONLY|O_NOFOLLOW|O_NONBLOCK`, so a FIFO cannot block.
 * - Every directory entered and the leaf are verified by descriptor (verify-opened.ts) before use. A
 *   directory or file this call created and then found outside is removed again (undo-creation.ts),
 *   so a refused call leaves nothing of its own outside; a directory that holds someone else's
 *   entries by then is left alone.
 * Does not promise: protection from a process that renames a directory from inside the workspace to
 * outside after its last check (that process needs write access outside); bind mounts; that a
 * refused write leaves nothing inside (directories it made inside stay, as with `mkdir -p`); that the
 * directory it opens right after its `mkdir` is the one `mkdir` made (undo-creation.ts).
 */
import { type FileHandle, constants, mkdir, open, readlink, rmdir, unlink } from "node:fs/promises";
import type { PinnedRoot } from "./pinned-root.js";
import { errorCode, reword } from "./proc-fd.js";
import { verifyOrUndo } from "./undo-creation.js";
import { type HardlinkPolicy, verifyDirectory, verifyOpened } from "./verify-opened.js";
import { type Entry, Walk, components } from "./walk.js";
import { NOT_REGULAR_FILE } from "../gates/messages.js";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
const DIRECTORY_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
const READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
const WRITE_EXISTING_FLAGS = O_WRONLY | O_NOFOLLOW | O_NONBLOCK;
const WRITE_NEW_FLAGS = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;
/** Before the umask, as `writeFile` creates files. */
const NEW_FILE_MODE = 0o666;

/** Linux's own limit (MAXSYMLINKS), so a link loop ends as it would in the kernel. */
export const MAX_SYMLINKS = 40;
/** A leaf that keeps appearing and vanishing between the two opens of a write is given up on. */
const LEAF_ATTEMPTS = 3;

export type OpenIntent = "read" | "write";

type Step = { kind: "entered" } | { kind: "symlink"; target: string } | { kind: "opened"; handle: FileHandle };

export async function openBeneath(
  root: PinnedRoot,
  rootReal: string,
  relativePath: string,
  intent: OpenIntent,
  policy: HardlinkPolicy,
): Promise<FileHandle> {
  const walk = new Walk(root.fd, rootReal);
  try {
    let pending = components(relativePath);
    let symlinks = 0;
    for (;;) {
      const name = pending.shift();
      // Only a symlink whose target ends in `..` or `.`, or the empty path, ends at a directory.
      if (name === undefined) throw new Error(NOT_REGULAR_FILE);
      if (name === "..") {
        await walk.up();
        continue;
      }
      const step =
        pending.length === 0 ? await openLeaf(walk, name, intent, policy) : await enterDirectory(walk, name, intent === "write");
      if (step.kind === "opened") return step.handle;
      if (step.kind === "symlink") {
        symlinks += 1;
        if (symlinks > MAX_SYMLINKS) throw new Error(`ELOOP: more than ${MAX_SYMLINKS} symbolic links on the way to ${walk.logical(name)}`);
        pending = [...(await walk.targetComponents(step.target)), ...pending];
      }
    }
  } finally {
    await walk.close();
  }
}

async function enterDirectory(walk: Walk, name: string, create: boolean): Promise<Step> {
  const entry = walk.entry(name);
  let triedToCreate = false;
  let created = false;
  for (;;) {
    let handle: FileHandle;
    try {
      handle = await open(entry.proc, DIRECTORY_FLAGS);
    } catch (error) {
      const code = errorCode(error);
      if (code === "ENOENT" && create && !triedToCreate) {
        triedToCreate = true;
        created = await makeDirectory(entry);
        continue;
      }
      // O_DIRECTORY|O_NOFOLLOW answers ENOTDIR for a symlink as for a file; readlink tells them apart.
      if (code === "ENOTDIR" || code === "ELOOP") {
        const target = await symlinkTarget(entry);
        if (target !== undefined) return { kind: "symlink", target };
      }
      throw reword(error, entry.proc, entry.logical);
    }
    await verifyOrUndo(handle, entry, () => verifyDirectory(handle, walk.rootReal), created ? rmdir : undefined);
    walk.push(handle, name);
    return { kind: "entered" };
  }
}

/** True when this call made the directory, false when someone else did first. */
async function makeDirectory(entry: Entry): Promise<boolean> {
  try {
    await mkdir(entry.proc);
    return true;
  } catch (error) {
    if (errorCode(error) === "EEXIST") return false;
    throw reword(error, entry.proc, entry.logical);
  }
}

async function openLeaf(walk: Walk, name: string, intent: OpenIntent, policy: HardlinkPolicy): Promise<Step> {
  const entry = walk.entry(name);
  let opened: { handle: FileHandle; created: boolean };
  try {
    opened = intent === "read" ? { handle: await open(entry.proc, READ_FLAGS), created: false } : await openForWrite(entry.proc);
  } catch (error) {
    if (errorCode(error) === "ELOOP") {
      const target = await symlinkTarget(entry);
      if (target !== undefined) return { kind: "symlink", target };
    }
    throw reword(error, entry.proc, entry.logical);
  }
  const { handle, created } = opened;
  await verifyOrUndo(handle, entry, () => verifyOpened(handle, walk.rootReal, policy), created ? unlink : undefined);
  return { kind: "opened", handle };
}

async function openForWrite(path: string): Promise<{ handle: FileHandle; created: boolean }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return { handle: await open(path, WRITE_EXISTING_FLAGS), created: false };
    } catch (error) {
      if (errorCode(error) !== "ENOENT") throw error;
    }
    try {
      return { handle: await open(path, WRITE_NEW_FLAGS, NEW_FILE_MODE), created: true };
    } catch (error) {
      // EEXIST: the name appeared between the two opens (or is a dangling symlink, which O_EXCL
      // refuses to follow); the next round's O_NOFOLLOW open sees which.
      if (errorCode(error) !== "EEXIST" || attempt === LEAF_ATTEMPTS) throw error;
    }
  }
}

async function symlinkTarget(entry: Entry): Promise<string | undefined> {
  try {
    return await readlink(entry.proc);
  } catch (error) {
    // EINVAL: not a symlink; ENOENT: gone meanwhile. Either way the open's own error is the answer.
    const code = errorCode(error);
    if (code === "EINVAL" || code === "ENOENT") return undefined;
    throw reword(error, entry.proc, entry.logical);
  }
}
