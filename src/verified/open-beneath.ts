/**
 * The descriptor walk of the verified tools, a userland stand-in for `openat2(RESOLVE_BENEATH)`,
 * which Node does not expose: the root pinned by a descriptor (`pinRoot`) and every file below it
 * opened from the directory that holds it (`openBeneath`), the way Go's `os.Root` does on Unix.
 * Plain Node names a file relative to an open directory only through the magic links in
 * `/proc/self/fd`; procfs.ts checks once that they can be trusted.
 */
import type { Stats } from "node:fs";
import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync } from "node:fs";
import { type FileHandle, lstat, mkdir, open, readlink, rename, rmdir, unlink } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { isInside } from "../gates/is-inside.js";
import { temporaryName } from "../tools/write.js";
import { QUIETLY, pinnedRoot } from "../gates/workspace-path.js";
import { ESCAPE_MESSAGE, NOT_REGULAR_FILE, WRITE_ABORTED } from "../gates/messages.js";

// Node 20's fs.constants has no O_PATH. 0o10000000 is Linux's value on every architecture Node runs
// on there (asm-generic; only alpha, parisc and sparc differ), and these tools run only on Linux.
// O_PATH opens a directory without read permission, so a walk passes an execute-only (0311)
// directory as the kernel's own path walk does.
const O_PATH: number = (constants as { O_PATH?: number }).O_PATH ?? 0o10000000;
const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
const DIRECTORY_FLAGS = O_PATH | O_DIRECTORY | O_NOFOLLOW;
const READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
const REPLACE_CHECK_FLAGS = O_WRONLY | O_NOFOLLOW | O_NONBLOCK;
const TEMPORARY_FLAGS = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;
/** Before the umask, as `writeFile` creates files; a replaced file's own mode is set afterwards. */
const NEW_FILE_MODE = 0o666;

/** Linux's own limit (MAXSYMLINKS), so a link loop ends as it would in the kernel. */
export const MAX_SYMLINKS = 40;

// ---------------------------------------------------------------------------------------------------
// Naming files through descriptors

export function descriptorLink(fd: number): string {
  return `/proc/self/fd/${fd}`;
}

/**
 * The entry `name` of the directory open as `fd`: an open, mkdir, readlink, lstat or unlink of this
 * string acts in that very directory (the kernel jumps to the descriptor, as `openat(fd, name)`).
 * A `/` in `name` would be walked by the kernel, following symlinks, so it is refused.
 */
export function throughDescriptor(fd: number, name: string): string {
  if (name === "" || name === "." || name === ".." || name.includes("/"))
    throw new Error(`not a single path component: ${JSON.stringify(name)}`);
  return `${descriptorLink(fd)}/${name}`;
}

/**
 * The kernel's answer to "where is this descriptor now?" (` (deleted)` appended once unlinked).
 * Synchronous: procfs answers from the kernel's own tables, never from a disk.
 */
function openedPath(fd: number): string {
  return readlinkSync(descriptorLink(fd));
}

/** Rewrites an fs error's message and path from the `/proc` string to the path the caller knows. */
export function reword(error: unknown, procPath: string, logicalPath: string): unknown {
  if (!(error instanceof Error)) return error;
  error.message = error.message.split(procPath).join(logicalPath);
  const withPath = error as NodeJS.ErrnoException;
  if (withPath.path === procPath) withPath.path = logicalPath;
  return error;
}

export function errorCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

// ---------------------------------------------------------------------------------------------------
// The pinned root

export interface PinnedRoot {
  /** An `O_PATH` descriptor of the root directory: what every walk starts from, and bash's cwd. */
  readonly fd: number;
  /** Where the pinned directory is now, by the kernel's answer. */
  currentPath(): string;
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

/**
 * Opens the root's real path as the chapter's tools pin it (`pinnedRoot`: the symlinks in the
 * caller-given path followed once; missing, not a directory, or not valid UTF-8 throws, naming the
 * root), synchronously, so construction fails at once. From then on re-pointing or replacing the path
 * `root` does not move the workspace. Does not promise that the directory stays where it was (a
 * rename moves it, and `currentPath()` follows), or a deterministic close: the descriptor is closed
 * when the last tool holding the pin is garbage-collected.
 */
export function pinRoot(root: string): PinnedRoot {
  const fd = openSync(pinnedRoot(root), O_PATH | O_DIRECTORY | O_NOFOLLOW);
  const pinned: PinnedRoot = { fd, currentPath: () => openedPath(fd) };
  closeOnCollect.register(pinned, fd);
  return pinned;
}

// ---------------------------------------------------------------------------------------------------
// The walk

interface Entry {
  /** `/proc/self/fd/<dirfd>/<name>`: what the syscalls are given. */
  proc: string;
  /** The path relative to the root, as the model would write it, for error messages (`.` for the root). */
  logical: string;
}

/** A path as the components to walk: empty parts and `.` dropped, `..` kept for the walk to take. */
function components(path: string): string[] {
  return path.split("/").filter((part) => part !== "" && part !== ".");
}

/**
 * Where a walk stands: the directories it holds open from the root down, with the names it took.
 * Directories it leaves (`..`, an absolute link target) stay open until `close()`, so a name it
 * created in one of them can still be taken back through that descriptor and no other. They are
 * `O_PATH` descriptors, opened and closed synchronously like the check's lookups: a directory is
 * looked up, never read, and a trip through the thread pool each way cost more than the calls.
 */
class Walk {
  private readonly held: { fd: number; name: string }[] = [];
  private readonly left: number[] = [];

  constructor(
    private readonly rootFd: number,
    readonly rootReal: string,
  ) {}

  logical(name: string): string {
    return join(...this.held.map((directory) => directory.name), name);
  }

  private here(): number {
    return this.held.at(-1)?.fd ?? this.rootFd;
  }

  /** The directory the walk stands in, for a call that names it rather than an entry of it. */
  current(): Entry {
    return { proc: descriptorLink(this.here()), logical: this.logical("") };
  }

  entry(name: string): Entry {
    return { proc: throughDescriptor(this.here(), name), logical: this.logical(name) };
  }

  push(fd: number, name: string): void {
    this.held.push({ fd, name });
  }

  /** `..`: back to the directory this walk came from, which it still holds; never above the root. */
  up(): void {
    const leaving = this.held.pop();
    if (leaving === undefined) throw new Error(ESCAPE_MESSAGE);
    this.left.push(leaving.fd);
  }

  /** The components to walk for a symlink's target; an absolute one must spell the root's real path. */
  targetComponents(target: string): string[] {
    const parts = components(target);
    if (!isAbsolute(target)) return parts;
    const rootParts = components(this.rootReal);
    if (!rootParts.every((part, index) => parts[index] === part)) throw new Error(ESCAPE_MESSAGE);
    this.left.push(...this.held.splice(0).map((directory) => directory.fd));
    return parts.slice(rootParts.length);
  }

  /** Releases every directory it holds or held, never the root, and forgets them: a number closed twice may be another call's descriptor by then. */
  close(): void {
    for (const fd of [...this.left.splice(0), ...this.held.splice(0).map((directory) => directory.fd)]) closeSync(fd);
  }
}

// ---------------------------------------------------------------------------------------------------
// Checks on what was opened

export interface HardlinkPolicy {
  /** Accept files with more than one hard link (off by default: another link may be outside). */
  allowHardlinks: boolean;
}

export interface ReplaceSettings extends HardlinkPolicy {
  /** The path asked for ends in `/`, `.` or `..`: it names a directory, which a write answers EISDIR. */
  namesDirectory: boolean;
  /** Once it fires, nothing is renamed into place. */
  signal: AbortSignal | undefined;
}

export function hardlinkRefusal(links: number): string {
  return `refused: the file has ${links} hard links, and another of them may be outside the workspace (allowHardlinks accepts this)`;
}

/**
 * What directories and temporary files get: the kernel must place the descriptor inside `rootReal`.
 * Synchronous, as the path check's lookups are (`SYNC_LOOKUPS` in workspace-path.ts): each costs
 * less than a thread-pool trip.
 */
function refuseOutside(fd: number, rootReal: string): void {
  if (!isInside(rootReal, openedPath(fd))) throw new Error(ESCAPE_MESSAGE);
}

/** A file to read or replace: inside, regular, one link. (A directory's link count is 2 and one more per subdirectory.) */
function verifyFile(fd: number, rootReal: string, policy: HardlinkPolicy): Stats {
  refuseOutside(fd, rootReal);
  const stats = fstatSync(fd);
  if (!stats.isFile()) throw new Error(NOT_REGULAR_FILE);
  if (stats.nlink > 1 && !policy.allowHardlinks) throw new Error(hardlinkRefusal(stats.nlink));
  return stats;
}

// ---------------------------------------------------------------------------------------------------
// The walk, and what it does at the leaf

type Step<T> = { kind: "entered" } | { kind: "symlink"; target: string } | { kind: "done"; value: T };

/** What this call created, to take back if it fails: the entry, and the object it was when made. */
interface Creation {
  entry: Entry;
  identity: string;
  remove: (path: string) => Promise<void>;
}

/** Device and inode: what the object at a name is, whatever its name. */
function identityOf(stats: Stats): string {
  return `${stats.dev}:${stats.ino}`;
}

/**
 * `openBeneath` opens a file below the pinned root for reading, `replaceBeneath` replaces one with new
 * content, both without ever letting the kernel follow a symlink.
 *
 * Promises:
 * - Every open, mkdir, readlink and rename names one component of a directory the walk holds open,
 *   starting from the root descriptor, through `/proc/self/fd/<dirfd>/<name>` with `O_NOFOLLOW`. A
 *   symlink swapped into the path at any moment is therefore seen, never followed by the kernel.
 *   Directories are opened `O_PATH`, so an execute-only directory is passed as the kernel passes it.
 * - A symlink met on the way is resolved here, as the kernel would, but inside the root: its target is
 *   put in front of the rest of the path and walked the same way; a relative target starts from the
 *   link's directory, an absolute one must spell `rootReal` and restarts from the root descriptor. A
 *   `..` that would climb above the root, and an absolute target anywhere else, throw
 *   `path escapes workspace`; more than 40 symlinks throw ELOOP. No symlink ever leads outside.
 * - Each directory entered and each file opened is verified by descriptor before use: the kernel must
 *   report it inside `rootReal`; the file read or replaced must be a regular file (a FIFO, socket or
 *   device answers `not a regular file` and is never waited on; a replace of a directory answers the
 *   kernel's EISDIR, a read `not a regular file`) with one link unless the policy allows hardlinks.
 * - `openBeneath` opens the file `O_RDONLY|O_NOFOLLOW|O_NONBLOCK`. `replaceBeneath` creates missing
 *   directories in the directory that holds them, writes the content to a new temporary file
 *   (`.write-<random>`, `O_CREAT|O_EXCL`) in the file's own directory, gives it the replaced file's
 *   mode, and renames it over the file: a reader or a concurrent writer sees the old file or the whole
 *   new one, never a mix. A symlink at the leaf is followed (the file it leads to inside is replaced,
 *   the link stays); a file with other hard links is replaced under this name only. A path that names
 *   a directory by its last step (`new/`, `file/`) answers the kernel's EISDIR and creates nothing;
 *   once `signal` fires, nothing is renamed into place and the call fails `aborted`.
 * - When the call fails, whatever it created (directories, the temporary file) is removed again,
 *   deepest first, each through the descriptor of the directory that holds it and only while its name
 *   still denotes the object this call made and, for a directory, only while it is empty. A refused or
 *   failed replace therefore leaves nothing of its own, inside or outside, and the old file as it was.
 * Does not promise: protection from a process that renames a directory from inside the workspace to
 * outside after its last check (that process needs write access outside); bind mounts (procfs reports
 * the path in this mount namespace); that the directory opened right after its `mkdir` is the one
 * `mkdir` made (Node cannot do both in one step, so a process renaming entries at that name can put
 * its own there, and if that directory is empty and refused, it is removed, as that process could do
 * itself); that what it created and cannot remove (a permission changed meanwhile) is reported: it
 * stays, empty, and the answer is the failure that stopped the call; durability (nothing is fsync'd);
 * the replaced file's owner (the new one belongs to this process's user).
 */
export async function openBeneath(root: PinnedRoot, rootReal: string, relativePath: string, policy: HardlinkPolicy): Promise<OpenedFile> {
  return walkBeneath(root, rootReal, relativePath, "read", (walk, name) => openForRead(walk, name, policy));
}

/** See `openBeneath`. */
export async function replaceBeneath(root: PinnedRoot, rootReal: string, relativePath: string, content: string, settings: ReplaceSettings): Promise<void> {
  return walkBeneath(root, rootReal, relativePath, "write", (walk, name, created) => replaceLeaf(walk, name, content, settings, created));
}

type OpenIntent = "read" | "write";

async function walkBeneath<T>(
  root: PinnedRoot,
  rootReal: string,
  relativePath: string,
  intent: OpenIntent,
  atLeaf: (walk: Walk, name: string, created: Creation[]) => Promise<Step<T>>,
): Promise<T> {
  const walk = new Walk(root.fd, rootReal);
  const created: Creation[] = [];
  try {
    let pending = components(relativePath);
    let symlinks = 0;
    for (;;) {
      const name = pending.shift();
      // Only the empty path, or a symlink whose target ends in `..` or `.`, ends at a directory.
      if (name === undefined) throw await directoryRefusal(walk, intent);
      if (name === "..") {
        walk.up();
        continue;
      }
      const step = pending.length === 0 ? await atLeaf(walk, name, created) : await enterDirectory(walk, name, intent, created);
      if (step.kind === "done") return step.value;
      if (step.kind === "symlink") {
        symlinks += 1;
        if (symlinks > MAX_SYMLINKS) throw new Error(`ELOOP: more than ${MAX_SYMLINKS} symbolic links on the way to ${walk.logical(name)}`);
        pending = [...walk.targetComponents(step.target), ...pending];
      }
    }
  } catch (error) {
    for (const creation of created.reverse()) await takeBack(creation);
    throw error;
  } finally {
    walk.close();
  }
}

/** A read of a directory is "not a regular file"; a write, the kernel's EISDIR, as the chapter's write. */
async function directoryRefusal(walk: Walk, intent: OpenIntent): Promise<unknown> {
  if (intent === "read") return new Error(NOT_REGULAR_FILE);
  const { proc, logical } = walk.current();
  return isDirectoryRefusal(proc, logical);
}

/** The kernel's EISDIR for creating `proc` with a trailing slash, whatever is there, with `logical` for its name. */
async function isDirectoryRefusal(proc: string, logical: string): Promise<unknown> {
  try {
    // A name ending in a slash is never created or opened for writing: this always throws EISDIR.
    await (await open(`${proc}/`, O_WRONLY | O_CREAT | O_NOFOLLOW, NEW_FILE_MODE)).close();
  } catch (error) {
    return reword(error, `${proc}/`, logical);
  }
  return new Error(NOT_REGULAR_FILE);
}

async function enterDirectory(walk: Walk, name: string, intent: OpenIntent, created: Creation[]): Promise<Step<never>> {
  const entry = walk.entry(name);
  let madeIt: boolean | undefined;
  for (;;) {
    let fd: number;
    try {
      fd = openSync(entry.proc, DIRECTORY_FLAGS);
    } catch (error) {
      const code = errorCode(error);
      if (code === "ENOENT" && intent === "write" && madeIt === undefined) {
        madeIt = await makeDirectory(entry);
        continue;
      }
      // O_DIRECTORY|O_NOFOLLOW answers ENOTDIR for a symlink as for a file; readlink tells them apart.
      const target = await symlinkTarget(entry);
      if (target !== undefined) return { kind: "symlink", target };
      throw reword(error, entry.proc, entry.logical);
    }
    walk.push(fd, name);
    if (madeIt === true) created.push({ entry, identity: identityOf(fstatSync(fd)), remove: rmdir });
    refuseOutside(fd, walk.rootReal);
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

/** A file `openBeneath` opened, with the `fstat` that verified it (its size bounds the read). */
export interface OpenedFile {
  handle: FileHandle;
  stats: Stats;
}

async function openForRead(walk: Walk, name: string, policy: HardlinkPolicy): Promise<Step<OpenedFile>> {
  const entry = walk.entry(name);
  let handle: FileHandle;
  try {
    handle = await open(entry.proc, READ_FLAGS);
  } catch (error) {
    return leafFailure(entry, error);
  }
  try {
    return { kind: "done", value: { handle, stats: verifyFile(handle.fd, walk.rootReal, policy) } };
  } catch (refusal) {
    await handle.close();
    throw refusal;
  }
}

/** The leaf's open failed: a symlink there is walked, whatever the open said; anything else is the answer. */
async function leafFailure(entry: Entry, error: unknown): Promise<Step<never>> {
  const target = await symlinkTarget(entry);
  if (target !== undefined) return { kind: "symlink", target };
  // What O_NONBLOCK gives for a FIFO without a reader, a socket, or a device without a driver.
  if (errorCode(error) === "ENXIO") throw new Error(NOT_REGULAR_FILE);
  throw reword(error, entry.proc, entry.logical);
}

async function replaceLeaf(walk: Walk, name: string, content: string, settings: ReplaceSettings, created: Creation[]): Promise<Step<undefined>> {
  const entry = walk.entry(name);
  if (settings.namesDirectory) throw await isDirectoryRefusal(entry.proc, entry.logical);
  let mode: number | undefined;
  try {
    // A new name is told by a quiet lstat: the open's ENOENT, thrown, cost more than both calls. Below
    // the walk's directory descriptor, `undefined` can only mean ENOENT.
    // Stryker disable next-line ConditionalExpression: opening a name that is not there only throws the ENOENT this lookup spares, which the catch below takes for a new name all the same
    if (lstatSync(entry.proc, QUIETLY) !== undefined) {
      // Opened for writing, though never written through: the kernel's answer tells a file from a
      // symlink (ELOOP), a directory (EISDIR), a FIFO or socket (ENXIO) and a missing name (ENOENT).
      // Synchronous, like the lookups: no data moves, and a pool trip each way cost more than the calls.
      const existing = openSync(entry.proc, REPLACE_CHECK_FLAGS);
      try {
        mode = verifyFile(existing, walk.rootReal, settings).mode;
      } finally {
        closeSync(existing);
      }
    }
  } catch (error) {
    if (errorCode(error) !== "ENOENT") return leafFailure(entry, error);
  }
  const temporary = walk.entry(temporaryName());
  const handle = await open(temporary.proc, TEMPORARY_FLAGS, NEW_FILE_MODE).catch((error: unknown) => {
    throw reword(error, temporary.proc, temporary.logical);
  });
  try {
    created.push({ entry: temporary, identity: identityOf(fstatSync(handle.fd)), remove: unlink });
    refuseOutside(handle.fd, walk.rootReal);
    if (mode !== undefined) await handle.chmod(mode & 0o7777);
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
  if (settings.signal?.aborted === true) throw new Error(WRITE_ABORTED);
  await rename(temporary.proc, entry.proc).catch((error: unknown) => {
    throw reword(reword(error, temporary.proc, temporary.logical), entry.proc, entry.logical);
  });
  return { kind: "done", value: undefined };
}

/**
 * The target when `entry` is a symlink, asked after an open of it failed: a symlink found there is
 * walked, whatever the open answered. Not a symlink (EINVAL), or gone meanwhile: the open's own error
 * is the answer.
 */
async function symlinkTarget(entry: Entry): Promise<string | undefined> {
  return readlink(entry.proc).catch(() => undefined);
}

/**
 * Removes what this call created, while its name still denotes that object (same device and inode).
 * Linux lets an open file be unlinked and an open directory be removed, so no handle needs closing
 * first. A failure here is no reason to stop (gone already; a directory someone filled: not ours to
 * empty), and the caller is already reporting the failure that matters.
 */
async function takeBack({ entry, identity, remove }: Creation): Promise<void> {
  try {
    if (identityOf(await lstat(entry.proc)) === identity) await remove(entry.proc);
  } catch {
    // ENOENT, ENOTEMPTY, or a permission changed meanwhile: what stays is empty, and not reported.
  }
}
