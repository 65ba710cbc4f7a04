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
 * that was checked. An absolute candidate below the root as the caller spelled it (`resolve(root)`,
 * say `/tmp/ws` whose real path is `/private/tmp/ws`) is first respelled below the real root. Tools must open it and nothing else (opening the raw candidate would let the
 * kernel read `link/../x` as `<link target>/../x`).
 *
 * What the answer tells about the outside: nothing about whether or what kind of object is there. A
 * candidate that leaves the root by name (`..`, an absolute path below neither the real root nor the
 * caller's spelling of it) is refused before any filesystem call; one that reaches the outside through a symlink and then fails to resolve (ENOENT, ENOTDIR) is
 * judged by where its nearest resolvable ancestor lies, so a missing, file, directory or link outside
 * all answer `path escapes workspace`. Real paths are compared as the bytes the kernel returns, never
 * through a lossy UTF-8 decode (a name with the byte 0xFF does not equal one with U+FFFD). Errors name
 * paths relative to the root (`realpath 'sub/x'`), never the host's absolute path.
 *
 * Does not promise: that the answer still holds when the tool opens the path. Between this check and
 * the open, another process can swap a directory for a symlink (TOCTOU; Node has no `openat`). A
 * hardlink to an outside file passes, since realpath reports the inside name. The root itself comes
 * from the caller, never from tool input. Two things about the outside still show: the target of a
 * dangling symlink inside (ENOENT when that target is missing, an escape when it exists outside), and
 * an error other than ENOENT or ENOTDIR met through a link to outside (EACCES, ELOOP), which
 * propagates as itself, as every error but ENOENT must.
 */
import { type Stats, lstatSync, realpathSync, statSync } from "node:fs";
import type * as fsPromises from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { isInside } from "./is-inside.js";
import { ESCAPE_MESSAGE, NUL_MESSAGE } from "./messages.js";

/** The check's lookups as `node:fs/promises` makes them, injectable for fault injection (EACCES as root). */
export type FsApi = Pick<typeof fsPromises, "lstat" | "realpath">;

/** What the check and the write tool read of an `lstat`. */
export type LeafStats = Pick<Stats, "isFile" | "isDirectory" | "isSymbolicLink" | "mode">;

/** What the check calls: an injected `FsApi`, or `SYNC_LOOKUPS`, which answer at once. */
export interface Lookups {
  /** With `QUIETLY`, may answer `undefined` for a name that does not resolve, rather than throw ENOENT (`node:fs` does). */
  lstat(path: string, options?: { bigint?: false; throwIfNoEntry?: false }): LeafStats | undefined | Promise<LeafStats | undefined>;
  realpath(path: string): string | Promise<string>;
  realpath(path: string, options: { encoding: "buffer" }): Buffer | Promise<Buffer>;
}

/**
 * A missing name answered, not thrown (`lstatSync`'s option, in both tool sets): an ENOENT thrown costs
 * some ten times the lookup itself, and the write of a new file meets one on every call. What
 * `undefined` covers differs between Node versions (ENOENT alone, or ENOTDIR too), so the check trusts
 * it only below a directory (`ancestorOfMissing`).
 */
export const QUIETLY = { bigint: false, throwIfNoEntry: false } as const;

/**
 * The check's lookups unless an `FsApi` is injected: synchronous ones. A lookup answers in a few µs
 * from the kernel's caches, where the same call through libuv's thread pool costs some 30 µs more
 * (`npm run bench`, "lookup" rows), which was most of what the check cost. The price: a lookup that
 * hangs (a dead network filesystem) holds the caller's thread, and no time bound fires meanwhile.
 */
const SYNC_LOOKUPS: Lookups = {
  lstat: lstatSync,
  // `.native` is looked up on every call, so that a trap set on it (the TOCTOU demo's) sees the check.
  realpath: ((path: string, options?: { encoding: "buffer" }) => realpathSync.native(path, options as { encoding: "buffer" })) as Lookups["realpath"],
};

/** What the check found out about a candidate; the write tool uses all of it. */
export interface CheckedPath {
  /** `resolve(root, candidate)`: the string that was checked, the one to open. */
  path: string;
  /** `path` itself when it exists (as `lstat` sees it), otherwise its nearest existing ancestor. */
  existing: string;
  /**
   * `lstat(path)` as the check saw it, whenever `path` exists (so `existing` is `path`). The write tool
   * takes the leaf's kind from it: a hand-made boundary that leaves it out has an existing file refused.
   */
  leaf?: LeafStats | undefined;
}

/**
 * The chapter's path boundary bound to one root: what the file tools call with the model's candidate.
 * Answers the path to open, or throws. `workspaceBoundary` also gives the pinned root (the tools name
 * paths relative to it) and the check's findings; a hand-made boundary (a fork's) may leave both out.
 */
export type Boundary = ((candidate: string, creating: boolean) => Promise<string>) & {
  /** The root's real path, pinned when the boundary was made. */
  readonly root?: string;
  /** The same check as a call with `creating`, answering everything it found out. */
  readonly creating?: (candidate: string) => Promise<CheckedPath>;
};

/**
 * The boundary the tools use: the chapter's `workspacePath` with the root's real path resolved once,
 * when the boundary is made (synchronously, so `createWorkspaceTools` stays synchronous), instead of
 * on every call. Stricter than the chapter, never looser: if the root is later replaced by a symlink
 * (bash may run `mv ws ws.old && ln -s / ws`), a per-call realpath would move the boundary to the
 * link's target, while the pinned real root makes every path resolve outside it and be refused. A
 * relative root is resolved against the working directory of that moment.
 * Throws when the root is missing, is not a directory, or has a real path that is not valid UTF-8
 * (Node would open a different name than the one checked). The cost: a deployment that repoints a
 * root symlink to switch workspaces must create new tools; and a boundary made later pins whatever
 * the root's name means by then, including a swap an earlier bash job made.
 */
export function workspaceBoundary(root: string, fsApi: Lookups = SYNC_LOOKUPS): Boundary {
  const rootReal = pinnedRoot(root);
  const handed = resolve(root);
  const check = (candidate: string, creating: boolean) => checkedPath(rootReal, throughHandedRoot(handed, rootReal, candidate), creating, fsApi);
  const boundary = async (candidate: string, creating: boolean) => (await check(candidate, creating)).path;
  return Object.assign(boundary, { root: rootReal, creating: (candidate: string) => check(candidate, true) });
}

/**
 * An absolute candidate below the root as the caller handed it over (`handed`, that is `resolve(root)`)
 * respelled below the root's real path: tools built on `/tmp/ws`, real path `/private/tmp/ws`, take
 * `/tmp/ws/x` for `x`, as they take a relative path. Lexical, so the handed spelling's symlinks are not
 * followed again (repointing them later moves nothing), and `..` is resolved first (`/tmp/ws/../x` is
 * not below it). Any other candidate comes back as it is, for the check to judge.
 */
export function throughHandedRoot(handed: string, rootReal: string, candidate: string): string {
  if (!isAbsolute(candidate)) return candidate;
  const named = resolve(candidate);
  return isInside(handed, named) ? join(rootReal, relative(handed, named)) : candidate;
}

/** The root's real path, as the boundary pins it; throws with the root's name and the reason. */
export function pinnedRoot(root: string): string {
  let real: Buffer;
  try {
    real = realpathSync.native(root, { encoding: "buffer" });
  } catch (error) {
    throw new Error(`workspace root ${JSON.stringify(root)}: ${(error as Error).message}`);
  }
  const text = exactUtf8(real);
  if (text === undefined) throw new Error(`workspace root ${JSON.stringify(root)}: its real path is not valid UTF-8`);
  if (!statSync(text).isDirectory()) throw new Error(`workspace root ${JSON.stringify(root)} is not a directory`);
  return text;
}

/** The bytes as a string that Node spells back to the same bytes, or undefined when they are not valid UTF-8. */
export function exactUtf8(bytes: Buffer): string | undefined {
  const text = bytes.toString();
  return Buffer.from(text).equals(bytes) ? text : undefined;
}

export async function workspacePath(
  root: string,
  candidate: string,
  creating: boolean,
  fsApi: Lookups = SYNC_LOOKUPS,
): Promise<string> {
  refuseNul(candidate);
  const rootReal = await fsApi.realpath(root);
  return (await checkedPath(rootReal, throughHandedRoot(resolve(root), rootReal, candidate), creating, fsApi)).path;
}

/**
 * The chapter's steps after `rootReal = realpath(root)`, with the outside kept out of the answer: the
 * check below a root whose real path the caller already holds (the verified tools have the kernel's
 * answer for their pinned root, so they do not resolve it again).
 */
export async function checkedPath(rootReal: string, candidate: string, creating: boolean, fsApi: Lookups = SYNC_LOOKUPS): Promise<CheckedPath> {
  refuseNul(candidate);
  const path = resolve(rootReal, candidate);
  // By name first: `..` and absolute paths are refused alike, whatever exists where they point.
  if (!isInside(rootReal, path)) throw new Error(ESCAPE_MESSAGE);
  const rootBytes = asBytes(rootReal);
  try {
    let existing = path;
    let leaf: LeafStats | undefined;
    if (creating) {
      leaf = await lstatIfAny(path, fsApi);
      if (leaf === undefined) existing = await ancestorOfMissing(path, fsApi);
    }
    if (!isInside(rootBytes, await realBytes(existing, fsApi))) throw new Error(ESCAPE_MESSAGE);
    return { path, existing, leaf };
  } catch (error) {
    if (isUnresolved(error)) await refuseWhenAncestorOutside(rootReal, rootBytes, path, fsApi);
    throw inWorkspaceTerms(error, rootReal);
  }
}

/** Before any filesystem call: no OS path holds NUL, and a layer that cut at it would check another name. */
function refuseNul(candidate: string): void {
  if (candidate.includes("\0")) throw new Error(NUL_MESSAGE);
}

/**
 * The real path as a string of bytes (latin1: one character per byte, so two paths compare equal only
 * when their bytes do, and "/" and "." keep their meaning for `isInside`). Node decodes a real path
 * to UTF-8 and turns each invalid byte into U+FFFD, so a path with U+FFFD in it is asked again as raw
 * bytes; any other is exact as decoded.
 */
async function realBytes(path: string, fsApi: Lookups): Promise<string> {
  const real = await fsApi.realpath(path);
  if (!real.includes("\uFFFD")) return asBytes(real);
  return asBytes(await fsApi.realpath(path, { encoding: "buffer" }));
}

function asBytes(path: Buffer | string): string {
  return Buffer.from(path).toString("latin1");
}

/** ENOENT and ENOTDIR: the path does not resolve, and where it would have led decides the answer. */
function isUnresolved(error: unknown): boolean {
  const code = errorCode(error);
  return code === "ENOENT" || code === "ENOTDIR";
}

/**
 * Finds the deepest ancestor of `path` that resolves (the root at the latest) and refuses when it lies
 * outside: `out/missing` through `out -> /elsewhere` then answers like `out/secret`. Resolution fails
 * from the first component that does not resolve onwards, so the deepest resolvable ancestor is found
 * by bisection: a path thousands of components deep costs a few calls, not one per component.
 */
async function refuseWhenAncestorOutside(rootReal: string, rootBytes: string, path: string, fsApi: Lookups): Promise<void> {
  const steps = relative(rootReal, path).split(sep);
  let deepest: string | undefined;
  // `path` itself (all the steps) is known not to resolve; try the ancestors from the root down.
  // Stryker disable next-line ArithmeticOperator: an upper bound past the last step also tries the whole path, which (on a tree that does not change between the calls) does not resolve: the same answer
  for (let low = 0, high = steps.length - 1; low <= high; ) {
    const middle = (low + high) >> 1;
    try {
      deepest = await realBytes(join(rootReal, ...steps.slice(0, middle)), fsApi);
      low = middle + 1;
    } catch (error) {
      if (!isUnresolved(error)) throw inWorkspaceTerms(error, rootReal);
      high = middle - 1;
    }
  }
  if (deepest !== undefined && !isInside(rootBytes, deepest)) throw new Error(ESCAPE_MESSAGE);
}

/**
 * A filesystem error with the absolute paths in its message (its `path` and `dest`) replaced by paths
 * relative to the root (`.` for the root itself), so that no answer shows where the workspace lives on
 * the host. The tools only ever name paths below the root. Other errors, and errors already in these
 * terms, come back as they are; the code, errno and syscall are kept.
 */
export function inWorkspaceTerms(error: unknown, rootReal: string): unknown {
  const { path, dest } = (error ?? {}) as NodeJS.ErrnoException & { dest?: unknown };
  // Already in workspace terms (the check's error, passed on by a tool) or no path at all: as it is.
  if (!(error instanceof Error) || typeof path !== "string" || !isAbsolute(path)) return error;
  let message = error.message;
  const shown = (absolute: string) => relative(rootReal, absolute) || ".";
  for (const absolute of typeof dest === "string" ? [path, dest] : [path]) message = message.split(`'${absolute}'`).join(`'${shown(absolute)}'`);
  return Object.assign(new Error(message), { ...error, path: shown(path), ...(typeof dest === "string" ? { dest: shown(dest) } : {}) });
}

/**
 * Walks up from `path` to the first entry that exists (a dangling symlink counts as existing: `lstat`
 * sees the link itself, and the realpath that follows fails on it). Rethrows anything but ENOENT;
 * throws `no existing ancestor` at the filesystem root instead of looping.
 */
export async function nearestExistingAncestor(path: string, fsApi: Lookups = SYNC_LOOKUPS): Promise<string> {
  return (await lstatIfAny(path, fsApi)) === undefined ? ancestorOfMissing(path, fsApi) : path;
}

/**
 * The nearest existing ancestor of `missing`, which a quiet `lstat` did not find. Below a directory that
 * answer can only have been ENOENT; below anything else (a file, a link) the kernel may have said
 * ENOTDIR, which must propagate, so `missing` is asked again aloud for the kernel's own error.
 */
async function ancestorOfMissing(missing: string, fsApi: Lookups): Promise<string> {
  let current = missing;
  let stats: LeafStats | undefined;
  do {
    const parent = dirname(current);
    if (parent === current) throw new Error("no existing ancestor");
    current = parent;
    stats = await lstatIfAny(current, fsApi);
  } while (stats === undefined);
  if (!stats.isDirectory()) await lstatIfAny(missing, fsApi, false);
  return current;
}

/** `lstat(path)`, or `undefined` for a name that does not resolve (ENOENT), however `fsApi` says so; other errors thrown. */
async function lstatIfAny(path: string, fsApi: Lookups, quietly = true): Promise<LeafStats | undefined> {
  try {
    return await fsApi.lstat(path, quietly ? QUIETLY : undefined);
  } catch (error) {
    if (errorCode(error) !== "ENOENT") throw error;
    return undefined;
  }
}

function errorCode(error: unknown): unknown {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}
