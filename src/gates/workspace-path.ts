/**
 * Gate 3 of the chapter: the path boundary. `workspacePath` turns a candidate path from the model into
 * the absolute path a tool must use, or throws `path escapes workspace`.
 *
 * Promises, at the moment of the check: the object the returned path names (for `creating`, its
 * nearest existing ancestor) resolves, through every symlink, to the real workspace root or below it.
 * Only ENOENT counts as "missing" on the way to that ancestor; any other error (EACCES, EIO, ELOOP,
 * ENOTDIR, ENAMETOOLONG) propagates, so a failure is never mistaken for an empty slot.
 * A candidate with a NUL byte is refused (`path must not contain NUL bytes`) before any filesystem
 * call, whatever `fsApi` would do with it: no OS path can hold NUL, and a layer that truncates at it
 * would check one name and open another.
 * The returned path is `resolve(rootReal, candidate)`: absolute, `..`-free, and the very string
 * that was checked. Tools must open it and nothing else (opening the raw candidate would let the
 * kernel read `link/../x` as `<link target>/../x`).
 *
 * Does not promise: that the answer still holds when the tool opens the path. Between this check and
 * the open, another process can swap a directory for a symlink (TOCTOU; Node has no `openat`). A
 * hardlink to an outside file passes, since realpath reports the inside name. The root itself comes
 * from the caller, never from tool input.
 */
import * as fsPromises from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { isInside } from "./is-inside.js";
import { ESCAPE_MESSAGE, NUL_MESSAGE } from "./messages.js";

/** The slice of `node:fs/promises` the check uses, injectable for fault injection (EACCES as root). */
export type FsApi = Pick<typeof fsPromises, "lstat" | "realpath">;


/**
 * The chapter's path boundary bound to one root: what the file tools call with the model's candidate.
 * Answers the path to open, or throws.
 */
export type Boundary = (candidate: string, creating: boolean) => Promise<string>;

/**
 * The boundary the tools use: the chapter's `workspacePath` with the root's real path resolved once,
 * at the first call, instead of on every call. The chapter fixes the root at construction; fixing its
 * real path too is stricter, never looser: if the root is later replaced by a symlink (bash may run
 * `mv ws ws.old && ln -s / ws`), a per-call realpath would move the boundary to the link's target,
 * while the pinned real root makes every path resolve outside it and be refused. A root that cannot be
 * resolved yet is tried again on the next call. The cost: a deployment that repoints a root symlink to
 * switch workspaces must create new tools.
 */
export function workspaceBoundary(root: string, fsApi: FsApi = fsPromises): Boundary {
  let rootReal: Promise<string> | undefined;
  return async (candidate, creating) => {
    rootReal ??= fsApi.realpath(root);
    const real = await rootReal.catch((error: unknown) => {
      rootReal = undefined;
      throw error;
    });
    return checkedPath(real, candidate, creating, fsApi);
  };
}

export async function workspacePath(
  root: string,
  candidate: string,
  creating: boolean,
  fsApi: FsApi = fsPromises,
): Promise<string> {
  return checkedPath(await fsApi.realpath(root), candidate, creating, fsApi);
}

/** The chapter's steps after `rootReal = realpath(root)`. */
async function checkedPath(rootReal: string, candidate: string, creating: boolean, fsApi: FsApi): Promise<string> {
  if (candidate.includes("\0")) throw new Error(NUL_MESSAGE);
  const requested = resolve(rootReal, candidate);
  let checked = requested;
  if (creating) {
    try {
      await fsApi.lstat(requested);
    } catch (error) {
      if (errorCode(error) !== "ENOENT") throw error;
      checked = await nearestExistingAncestor(dirname(requested), fsApi);
    }
  }
  const checkedReal = await fsApi.realpath(checked);
  if (!isInside(rootReal, checkedReal)) throw new Error(ESCAPE_MESSAGE);
  return requested;
}

/**
 * Walks up from `path` to the first entry that exists (a dangling symlink counts as existing: `lstat`
 * sees the link itself, and the realpath that follows fails on it). Rethrows anything but ENOENT;
 * throws `no existing ancestor` at the filesystem root instead of looping.
 */
export async function nearestExistingAncestor(path: string, fsApi: FsApi = fsPromises): Promise<string> {
  let current = path;
  while (true) {
    try {
      await fsApi.lstat(current);
      return current;
    } catch (error) {
      if (errorCode(error) !== "ENOENT") throw error;
      const parent = dirname(current);
      if (parent === current) throw new Error("no existing ancestor");
      current = parent;
    }
  }
}

function errorCode(error: unknown): unknown {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

