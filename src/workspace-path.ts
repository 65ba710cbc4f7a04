/**
 * Gate 3 of the chapter: the path boundary. `workspacePath` turns a candidate path from the model into
 * the absolute path a tool must use, or throws `path escapes workspace`.
 *
 * Promises, at the moment of the check: the object the returned path names (for `creating`, its
 * nearest existing ancestor) resolves, through every symlink, to the real workspace root or below it.
 * Only ENOENT counts as "missing" on the way to that ancestor; any other error (EACCES, EIO, ELOOP,
 * ENOTDIR, ENAMETOOLONG) propagates, so a failure is never mistaken for an empty slot.
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

/** The slice of `node:fs/promises` the check uses, injectable for fault injection (EACCES as root). */
export type FsApi = Pick<typeof fsPromises, "lstat" | "realpath">;

export const ESCAPE_MESSAGE = "path escapes workspace";

export async function workspacePath(
  root: string,
  candidate: string,
  creating: boolean,
  fsApi: FsApi = fsPromises,
): Promise<string> {
  const rootReal = await fsApi.realpath(root);
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

/**
 * The real root, resolved when the tools are created instead of on every call as `workspacePath`
 * does. The chapter fixes the root at construction, and fixing its real path there too is stricter:
 * if the root directory is later replaced by a symlink (bash can run `mv ws ws.old && ln -s / ws`,
 * since the process may write the root's parent), a per-call realpath would move the boundary to the
 * link's target, while a fixed real root makes every path resolve outside it and be refused. A root
 * that does not exist yet is resolved again on the next call, so tools may be created before it is.
 * The price: a deployment that repoints a root symlink to switch workspaces must create new tools.
 */
export function realRootOnce(root: string, fsApi: FsApi = fsPromises): () => Promise<string> {
  const resolveRoot = () => {
    const resolving = fsApi.realpath(root);
    // Handled here so a root that is missing at construction is not an unhandled rejection.
    resolving.catch(() => undefined);
    return resolving;
  };
  let resolved = resolveRoot();
  return async () => {
    try {
      return await resolved;
    } catch {
      resolved = resolveRoot();
      return resolved;
    }
  };
}

/** What the tools learn from gate 3: the path to open and the existing entry whose real path was checked. */
export interface CheckedPath {
  /** `resolve(rootReal, candidate)`, exactly what `workspacePath` returns. */
  path: string;
  /** `path` itself when it exists, else its nearest existing ancestor (only when creating). */
  checked: string;
}

/**
 * Gate 3 as the tools run it, with the root already real (see `realRootOnce`): the same answer as
 * `workspacePath` on any real filesystem, the same path or the same error, in fewer calls. It asks
 * `realpath` first, because when the path exists that one call both proves it and says where it
 * really is; only when `realpath` fails does it run the chapter's steps (`lstat` the path, walk up to
 * the nearest existing ancestor, `realpath` that), which tell a missing entry (walk up) from one that
 * exists but cannot be resolved (a dangling or looping link: refuse). On a real filesystem `realpath`
 * of a path succeeds only when `lstat` of it does, so the shortcut skips no error; an injected
 * `fsApi` that faults `lstat` alone is seen only on the paths where `realpath` fails too.
 */
export async function checkUnderRealRoot(
  rootReal: string,
  candidate: string,
  creating: boolean,
  fsApi: FsApi = fsPromises,
): Promise<CheckedPath> {
  const path = resolve(rootReal, candidate);
  let checked = path;
  let checkedReal: string;
  try {
    checkedReal = await fsApi.realpath(path);
  } catch (error) {
    if (!creating) throw error;
    checked = await nearestExistingAncestor(path, fsApi);
    checkedReal = await fsApi.realpath(checked);
  }
  if (!isInside(rootReal, checkedReal)) throw new Error(ESCAPE_MESSAGE);
  return { path, checked };
}
