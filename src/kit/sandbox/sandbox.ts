/**
 * A disposable workspace with canaries beside it, for tests and properties that must prove nothing
 * escaped.
 *
 * Layout, under one fresh temp directory `base` (its real path, so a symlinked /tmp cannot confuse a
 * comparison), with the workspace's parent `GUARD_DEPTH` directories further down:
 *   base/g/g/g/g/ws/                the workspace root handed to the tools (`rootName`, default `ws`)
 *   base/g/g/g/g/outside/           a canary directory with a secret file and a subdirectory
 *   base/g/g/g/g/ws-other/, WS/, …  the root's twins (root-twins.ts: similar prefixes, letter case,
 *                                   normalization, a lossily decoded byte), each holding a secret file
 *   base/g/g/g/g/scratch/           the caller's own moving parts (a TOCTOU attacker parks here); not
 *                                   a canary, so nothing is ever expected to land in it by accident
 *   base/g/g/g/g/scratch/root-alias a symlink to the workspace: the root as a caller may spell it
 *   base/g/g/g/g/scratch/special/   one special file of each kind, made when a tree first asks for it
 *   base/g/g/g/g/scratch/home/, tmp/ the HOME (with a canary file) and TMPDIR of a server process
 *                                   started on the root (`serverEnvironmentOf`)
 *                                   (`specialFile`); a tree lays out further names of these
 * The guard directories exist so that a path with at most `GUARD_DEPTH` parent steps beyond the
 * workspace's parent, even opened raw by a broken implementation under audit, still lands inside
 * `base`, where the canary check sees it.
 *
 * Promises: `outsideChanges()` lists every difference (added, removed, changed file content, symlink
 * target or type, a file's or directory's mode or owner, a file's modification time to the
 * millisecond) anywhere under `base` except inside the workspace and `scratch`, since creation,
 * each with what stands at that path now; names are compared as bytes, so a twin whose name no JS
 * string spells is watched too. `canaryChanges()` is the same list as one line per change
 * (`added PATH`, `removed PATH`, `changed PATH`); `SECRET` marks
 * every canary file so a read that returns it is detectable; `dispose()` removes the whole tree, links
 * included, without following them, however deep a target made it (remove.ts), and when the
 * filesystem refuses, records an `AuditFault` (fault.ts) rather than throw: the audit's failure to
 * clean up is its own, never the verdict of the case; `dispose({ recordFault: false })` neither
 * records nor throws it, for a caller that removes the tree again later and judges that attempt
 * instead (the audit's pool, runner/property.ts, while a server may still write there). A sandbox that cannot be made or laid out
 * throws `AuditFault`. `reset()` makes the sandbox as new again and answers whether it
 * proved it: it puts back every canary a case changed, exactly as the snapshot taken at creation has
 * it (an entry added outside is removed without following links, one removed or changed is written
 * again), empties the workspace and `scratch` (but for the root alias, made anew if it was moved), and
 * compares the canaries again; it answers false when the root is no longer a real directory or the
 * outside does not compare as new, so the caller disposes the sandbox instead. `perturbOutside()` changes what a tool could
 * learn of the outside and nothing of the workspace: every canary file's content, size and times, the
 * times of every directory above and beside the workspace, and a new file `PERTURBED_NAME` in each of
 * them; the function it answers puts every one back as it was (contents, times, names), so the
 * canaries compare as unchanged again.
 * Does not promise: to notice writes outside `base`; to put times back finer than the millisecond (a
 * Date's), so a tool that reveals only the sub-millisecond digits of an outside time goes unseen.
 * Generators keep every path and link target they produce within `GUARD_DEPTH` parent steps (see
 * audit/arbitraries/), which is what keeps them inside.
 */
import { execFileSync } from "node:child_process";
import { accessSync, chmodSync, chownSync, constants, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, realpathSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, realpath, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { type RootTwin, rootTwins } from "./root-twins.js";
import { AuditFault, recordAuditFault } from "./fault.js";
import { removeTree } from "./remove.js";

export { SIMILAR_PREFIX_SUFFIXES } from "./root-twins.js";

export const SECRET = "CANARY-SECRET-7f3a";

/** The file every canary directory holds, and the subdirectory of the outside canary. */
export const CANARY_FILE = "secret.txt";
export const CANARY_DIR = "dir";

/** Parent steps above the workspace's parent that still land inside the sandbox. */
export const GUARD_DEPTH = 4;

/** The name of the workspace's alias in `scratch`, a symlink to the root. */
export const ROOT_ALIAS = "root-alias";

/** The directory of `scratch` where the sandbox keeps its special files, kept by `reset`. */
export const SPECIAL_DIR = "special";

/**
 * The directories of `scratch` a server process started on the sandbox's root is given as `HOME`
 * and `TMPDIR` (mcp/target.ts), kept by `reset`: a server that lives from case to case keeps them.
 */
export const SERVER_HOME = "home";
export const SERVER_TMP = "tmp";

/**
 * The `HOME` and `TMPDIR` of a server process started on `root`, when `root` (or what it leads to)
 * is the workspace of a sandbox: `scratch/home`, holding the canary file `CANARY_FILE` (so a tool
 * that expands `~` after its check answers the secret), and `scratch/tmp`, each made when missing
 * and the canary written again. Not watched for changes, as `scratch` is not: what a server keeps in
 * its home (a cache, a log) is no finding. Undefined for a root of no sandbox.
 */
export function serverEnvironmentOf(root: string): { HOME: string; TMPDIR: string } | undefined {
  let real: string;
  try {
    real = realpathSync(root);
  } catch {
    return undefined;
  }
  const scratch = join(dirname(real), "scratch");
  if (!lstatSync(join(dirname(real), "outside"), { throwIfNoEntry: false })?.isDirectory() || !lstatSync(scratch, { throwIfNoEntry: false })?.isDirectory()) return undefined;
  const home = join(scratch, SERVER_HOME);
  const tmp = join(scratch, SERVER_TMP);
  mkdirSync(home, { recursive: true });
  mkdirSync(tmp, { recursive: true });
  writeFileSync(join(home, CANARY_FILE), `${SECRET} home\n`);
  return { HOME: home, TMPDIR: tmp };
}

/**
 * The kinds of file that are not regular a tree may lay out: a FIFO (a read or a write of it blocks
 * until the other end opens), a UNIX socket (an open fails with ENXIO), and a character device, the
 * null device (major 1, minor 3): it swallows what is written and reads empty. No other device is
 * made: one that reads forever would take the memory of whoever reads it, the audit's own process
 * when the target is a module.
 */
export type SpecialKind = "fifo" | "socket" | "device";

/** The file `perturbOutside` adds to every directory outside: a name candidates use, so that a tool telling whether it exists is seen. */
export const PERTURBED_NAME = "new.txt";

/**
 * Where the audit's sandboxes go: `$TMPDIR` when the user set it, else /dev/shm when it is a writable
 * tmpfs (every case creates and removes a tree; in memory that costs a fraction of a disk's
 * metadata writes), else the OS temp directory.
 */
export function auditTempDir(): string {
  if (process.env.TMPDIR === undefined && process.platform === "linux") {
    try {
      accessSync(SHARED_MEMORY, constants.W_OK);
      return SHARED_MEMORY;
    } catch {
      // No tmpfs here: the OS temp directory below.
    }
  }
  return tmpdir();
}

const SHARED_MEMORY = "/dev/shm";

export interface SandboxOptions {
  /** The workspace's own name, whose twins become canaries beside it (default `ws`). */
  rootName?: string;
  /** Where `base` is created (default the OS temp directory). */
  parent?: string;
}

/** What a path outside the workspace holds: the state a change is judged by. */
export type EntryState =
  | { kind: "missing" }
  | { kind: "directory" }
  | { kind: "file"; bytes: number }
  | { kind: "symlink"; target: string }
  | { kind: "special"; mode: number };

export interface OutsideChange {
  change: "added" | "removed" | "changed";
  path: string;
  /** What is at `path` now (`missing` once removed). */
  now: EntryState;
}

export interface Sandbox {
  readonly base: string;
  readonly root: string;
  readonly outside: string;
  /** The root's twins that a string can name, in `rootTwins` order: `sibling0`, `sibling1`, … */
  readonly siblings: readonly string[];
  /** Absolute paths of the twins whose names no JS string spells (the lossy byte). */
  readonly rawSiblings: readonly Buffer[];
  readonly scratch: string;
  /** `scratch/root-alias`, a symlink to the root, kept by `reset`. */
  readonly rootAlias: string;
  /**
   * The sandbox's special file of `kind` (in `scratch/special/`, made the first time it is asked for),
   * or undefined where this process cannot make one (a device node needs root and a filesystem that
   * allows devices).
   */
  specialFile(kind: SpecialKind): Promise<string | undefined>;
  outsideChanges(): Promise<OutsideChange[]>;
  /** Changes the outside (see above) and answers how to put it back. */
  perturbOutside(): Promise<() => Promise<void>>;
  canaryChanges(): Promise<string[]>;
  /** `canariesChecked`: the caller has just found `canaryChanges()` empty, so reset need not walk them again. */
  reset(options?: { canariesChecked?: boolean }): Promise<boolean>;
  /** `recordFault: false`: a removal the filesystem refuses is left for the caller to try again (see above). */
  dispose(options?: { recordFault?: boolean }): Promise<void>;
}

export async function createSandbox(prefix = "workspace-gates-", options: SandboxOptions = {}): Promise<Sandbox> {
  const parentDir = options.parent ?? tmpdir();
  const base = await realpath(await mkdtemp(join(parentDir, prefix))).catch((error: unknown) => {
    throw new AuditFault(`the audit could not make a sandbox in ${parentDir}: ${error instanceof Error ? error.message : String(error)}`);
  });
  try {
    return await layOutSandbox(base, options);
  } catch (error) {
    removeTree(base);
    throw new AuditFault(`the audit could not lay out its sandbox ${base}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function layOutSandbox(base: string, options: SandboxOptions): Promise<Sandbox> {
  const parent = join(base, ...Array<string>(GUARD_DEPTH).fill("g"));
  const root = join(parent, options.rootName ?? "ws");
  const outside = join(parent, "outside");
  const scratch = join(parent, "scratch");
  const twins = rootTwins(options.rootName ?? "ws");
  const twinPath = ({ name }: RootTwin): string | Buffer => (typeof name === "string" ? join(parent, name) : Buffer.concat([Buffer.from(`${parent}/`), name]));
  const siblings = twins.map(twinPath).filter((path): path is string => typeof path === "string");
  const rawSiblings = twins.map(twinPath).filter((path): path is Buffer => typeof path !== "string");
  await mkdir(root, { recursive: true });
  await mkdir(scratch);
  const rootAlias = join(scratch, ROOT_ALIAS);
  await symlink(root, rootAlias);
  await mkdir(join(outside, CANARY_DIR), { recursive: true });
  await writeFile(join(outside, CANARY_FILE), `${SECRET} outside\n`);
  await writeFile(join(outside, CANARY_DIR, CANARY_FILE), `${SECRET} outside/${CANARY_DIR}\n`);
  for (const sibling of [...siblings, ...rawSiblings]) {
    await mkdir(sibling);
    await writeFile(canaryFileOf(sibling), `${SECRET} ${sibling.toString()}\n`);
  }
  const canaryFiles = [join(outside, CANARY_FILE), join(outside, CANARY_DIR, CANARY_FILE), ...[...siblings, ...rawSiblings].map(canaryFileOf)];
  // Every directory a path out of the workspace can list: the guards, the workspace's parent, the canaries.
  const outsideDirectories = [
    ...Array.from({ length: GUARD_DEPTH + 1 }, (_, depth) => join(base, ...Array<string>(depth).fill("g"))),
    outside,
    join(outside, CANARY_DIR),
    ...siblings,
    ...rawSiblings,
  ];
  const unwatched = new Set([root, scratch].map(byteKey));
  const before = snapshotOutside(base, unwatched);
  const outsideChanges = async (): Promise<OutsideChange[]> => diffSnapshots(before, snapshotOutside(base, unwatched)).map(({ key: _key, ...change }) => change);
  const canaryChanges = async () => (await outsideChanges()).map(({ change, path }) => `${change} ${path}`);
  const specials = new Map<SpecialKind, Promise<string | undefined>>();
  return {
    base,
    root,
    outside,
    siblings,
    rawSiblings,
    scratch,
    rootAlias,
    specialFile(kind) {
      const made = specials.get(kind) ?? makeSpecial(join(scratch, SPECIAL_DIR), kind);
      specials.set(kind, made);
      return made;
    },
    outsideChanges,
    canaryChanges,
    perturbOutside: async () => perturbEntries(canaryFiles, outsideDirectories),
    async reset({ canariesChecked = false } = {}) {
      try {
        if (!canariesChecked) {
          const changed = diffSnapshots(before, snapshotOutside(base, unwatched));
          if (changed.length > 0) {
            restoreOutside(before, changed.map(({ key }) => key));
            if (diffSnapshots(before, snapshotOutside(base, unwatched)).length > 0) return false;
          }
        }
        for (const dir of [root, scratch]) {
          const stats = lstatSync(dir);
          if (!stats.isDirectory() || stats.isSymbolicLink()) return false;
          // rm does not follow links, so emptying cannot reach through one. Names as bytes: a case may
          // leave one that no string spells.
          const names = readdirSync(dir, { encoding: "buffer" }).filter((name) => dir !== scratch || ![ROOT_ALIAS, SPECIAL_DIR, SERVER_HOME, SERVER_TMP].includes(name.toString("latin1")));
          for (const name of names) removeTree(childBytes(dir, name));
        }
        if (aliasTarget(rootAlias) !== root) {
          rmSync(rootAlias, { force: true });
          symlinkSync(root, rootAlias);
        }
        return true;
      } catch {
        return false;
      }
    },
    async dispose({ recordFault = true } = {}) {
      try {
        removeTree(base);
      } catch (error) {
        // The case's verdict stands; the audit's own failure to clean up is the audit's to report.
        if (!(error instanceof AuditFault)) throw error;
        if (recordFault) recordAuditFault(error);
      }
    },
  };
}

/**
 * Makes the special file of `kind` in `directory`, answering its path, or undefined when this process
 * may not make it. A FIFO and a device node take a process (Node has no mkfifo or mknod); a socket is
 * bound by a server that is closed at once, under a name it then no longer owns, so the file stays.
 */
async function makeSpecial(directory: string, kind: SpecialKind): Promise<string | undefined> {
  mkdirSync(directory, { recursive: true });
  const path = join(directory, kind);
  try {
    if (kind === "fifo") execFileSync("mkfifo", [path], { stdio: "ignore" });
    else if (kind === "device") execFileSync("mknod", [path, "c", "1", "3"], { stdio: "ignore" });
    else {
      const server = createServer();
      const bound = `${path}.bound`;
      await new Promise<void>((resolve, reject) => server.once("error", reject).listen(bound, resolve));
      renameSync(bound, path);
      await new Promise((resolve) => server.close(resolve));
    }
    return path;
  } catch {
    return undefined;
  }
}

/** `dir/name` as bytes, for a name read as bytes (`readdir` with `encoding: "buffer"`). */
export function childBytes(dir: string | Buffer, name: Buffer): Buffer {
  return Buffer.concat([Buffer.from(dir), Buffer.from("/"), name]);
}

function aliasTarget(alias: string): string | undefined {
  try {
    return readlinkSync(alias);
  } catch {
    return undefined;
  }
}

function canaryFileOf(directory: string | Buffer): string | Buffer {
  return typeof directory === "string" ? join(directory, CANARY_FILE) : Buffer.concat([directory, Buffer.from(`/${CANARY_FILE}`)]);
}

/** A canary file's content in the perturbed outside: the secret still, and another size. */
const PERTURBED_CONTENT = `${SECRET} perturbed: another content, another size, other times\n`;
/** The times every perturbed entry gets: a moment no run of the audit can be in. */
const PERTURBED_TIME = new Date("2001-02-03T04:05:06.789Z");

/**
 * Changes `files` (their content becomes `content`, with another size) and `directories` (a new file
 * `PERTURBED_NAME` in each), and the times of them all; answers how to put every one back.
 */
export function perturbEntries(files: readonly (string | Buffer)[], directories: readonly (string | Buffer)[], content = PERTURBED_CONTENT): () => Promise<void> {
  // Times first: reading a file for its content may move its atime.
  const times = [...files, ...directories].map((path) => ({ path, stats: lstatSync(path) }));
  const contents = files.map((file) => readFileSync(file));
  const added = directories.map((directory) => (typeof directory === "string" ? join(directory, PERTURBED_NAME) : Buffer.concat([directory, Buffer.from(`/${PERTURBED_NAME}`)])));
  for (const file of [...files, ...added]) writeFileSync(file, content);
  for (const path of [...files, ...directories, ...added]) utimesSync(path, PERTURBED_TIME, PERTURBED_TIME);
  return async () => {
    for (const file of added) rmSync(file, { force: true });
    files.forEach((file, index) => writeFileSync(file, contents[index] as Buffer));
    // Directories last: removing a file changes its directory's times.
    for (const { path, stats } of times) utimesSync(path, stats.atime, stats.mtime);
  };
}

/**
 * Each path's state, a fingerprint that changes with the content, target or type, and the bytes to
 * make it again (a file's content, a link's target), by path bytes.
 */
type Snapshot = Map<string, { path: string; state: EntryState; fingerprint: string; bytes?: Buffer; meta?: Meta }>;

/**
 * A file's or a directory's mode and owner, and a file's times: what a chmod, chown or touch that
 * follows a link out changes (fs.chmod follows a leaf link). Times to the millisecond, as a Date
 * puts them back; a directory's times are left out, since a name made and removed in it moves them.
 */
interface Meta {
  mode: number;
  uid: number;
  gid: number;
  times?: { atime: Date; mtime: Date };
}

const metaPrint = (meta: Meta) => `mode ${meta.mode.toString(8)} owner ${meta.uid}:${meta.gid}${meta.times === undefined ? "" : ` mtime ${meta.times.mtime.getTime()}`}`;

/** A path's bytes as a map key: two names that decode to the same string stay apart. */
function byteKey(path: string | Buffer): string {
  return (typeof path === "string" ? Buffer.from(path) : path).toString("latin1");
}

/** A path for a reader: UTF-8 where it decodes, `\xFF` for each byte that does not. */
export function displayBytes(path: Buffer): string {
  const text = path.toString("utf8");
  if (Buffer.from(text).equals(path)) return text;
  let shown = "";
  for (let at = 0; at < path.length; ) {
    const rest = path.subarray(at);
    const length = [4, 3, 2, 1].find((size) => size <= rest.length && Buffer.from(rest.subarray(0, size).toString("utf8")).equals(rest.subarray(0, size)));
    if (length === undefined) {
      shown += `\\x${rest[0]?.toString(16).toUpperCase().padStart(2, "0")}`;
      at++;
    } else {
      shown += rest.subarray(0, length).toString("utf8");
      at += length;
    }
  }
  return shown;
}

/**
 * Synchronous, like the rest of the sandbox's work between cases: nothing of the case is in flight
 * then, and the walk is some eighty lookups in a row, each a trip through the thread pool when
 * asynchronous, which cost more than the tool calls the snapshot judges (docs/bench.md, "Over MCP").
 */
function snapshotOutside(base: string, unwatched: ReadonlySet<string>): Snapshot {
  const entries: Snapshot = new Map();
  snapshotInto(Buffer.from(base), unwatched, entries);
  return entries;
}

function snapshotInto(path: Buffer, unwatched: ReadonlySet<string>, entries: Snapshot): void {
  const key = byteKey(path);
  if (unwatched.has(key)) return;
  const shown = displayBytes(path);
  let stats;
  try {
    stats = lstatSync(path);
  } catch {
    entries.set(key, { path: shown, state: { kind: "missing" }, fingerprint: "missing" });
    return;
  }
  if (stats.isSymbolicLink()) {
    const raw = readlinkSync(path, { encoding: "buffer" });
    const target = displayBytes(raw);
    entries.set(key, { path: shown, state: { kind: "symlink", target }, fingerprint: `link -> ${raw.toString("latin1")}`, bytes: raw });
  } else if (stats.isFile()) {
    const raw = readFileSync(path);
    const meta = { mode: stats.mode, uid: stats.uid, gid: stats.gid, times: { atime: stats.atime, mtime: stats.mtime } };
    entries.set(key, { path: shown, state: { kind: "file", bytes: raw.length }, fingerprint: `file ${metaPrint(meta)} ${raw.toString("latin1")}`, bytes: raw, meta });
  } else if (stats.isDirectory()) {
    const meta = { mode: stats.mode, uid: stats.uid, gid: stats.gid };
    entries.set(key, { path: shown, state: { kind: "directory" }, fingerprint: `dir ${metaPrint(meta)}`, meta });
    const names = readdirSync(path, { encoding: "buffer" }).sort(Buffer.compare);
    for (const name of names) snapshotInto(childBytes(path, name), unwatched, entries);
  } else entries.set(key, { path: shown, state: { kind: "special", mode: stats.mode }, fingerprint: `special mode ${stats.mode}` });
}

function diffSnapshots(before: Snapshot, after: Snapshot): (OutsideChange & { key: string })[] {
  const changes: (OutsideChange & { key: string })[] = [];
  for (const [key, was] of before) {
    const now = after.get(key);
    if (now === undefined) changes.push({ change: "removed", path: was.path, now: { kind: "missing" }, key });
    else if (now.fingerprint !== was.fingerprint) changes.push({ change: "changed", path: was.path, now: now.state, key });
  }
  for (const [key, now] of after) if (!before.has(key)) changes.push({ change: "added", path: now.path, now: now.state, key });
  return changes;
}

/**
 * Puts each changed path back as `before` has it: whatever stands there now goes first (`rm` follows
 * no link), then, parents before children, what stood there is made again.
 */
function restoreOutside(before: Snapshot, keys: readonly string[]): void {
  // A directory that is still one had only its mode or owner changed: put back in place, its entries kept.
  const stillDirectories = keys.filter((key) => before.get(key)?.state.kind === "directory" && lstatSync(Buffer.from(key, "latin1"), { throwIfNoEntry: false })?.isDirectory() === true);
  for (const key of stillDirectories) restoreMeta(Buffer.from(key, "latin1"), before.get(key)?.meta);
  const paths = keys.filter((key) => !stillDirectories.includes(key)).sort((one, other) => one.length - other.length);
  // A path under another changed path goes with it: removed by itself, it may be reached through a
  // link that now stands in its parent's place.
  const topmost = paths.filter((key) => !paths.some((other) => key.startsWith(`${other}/`)));
  for (const key of topmost) removeTree(Buffer.from(key, "latin1"));
  for (const key of paths) {
    const was = before.get(key);
    const path = Buffer.from(key, "latin1");
    if (was === undefined || was.state.kind === "missing") continue;
    if (was.state.kind === "directory") mkdirSync(path, { recursive: true });
    else if (was.state.kind === "symlink") symlinkSync(was.bytes as Buffer, path);
    else if (was.state.kind === "file") writeFileSync(path, was.bytes as Buffer);
    restoreMeta(path, was.meta);
  }
}

function restoreMeta(path: Buffer, meta: Meta | undefined): void {
  if (meta === undefined) return;
  chownSync(path, meta.uid, meta.gid);
  chmodSync(path, meta.mode & 0o7777);
  if (meta.times !== undefined) utimesSync(path, meta.times.atime, meta.times.mtime);
}

/** A path in a sandbox, shown beside the workspace (`ws/docs/secret.txt`, `outside/dir`). */
export function displayPath(box: Sandbox, path: string): string {
  // Relative to the workspace's parent, where ws/, outside/ and the siblings sit side by side.
  const shown = relative(dirname(box.root), path);
  return shown === "" || shown.startsWith("..") ? path : shown;
}
