/**
 * Where memfs answers differently from the disk, operation by operation: the calls a path check and a
 * file tool rely on (realpath, lstat, stat, open for read and write, mkdir -p, rename), each on the
 * same tree in both worlds, with `..` after links, trailing slashes, dangling links, link chains and
 * permissions. docs/memfs.md is rendered from `replayDivergences` and a test holds it there, so a
 * memfs upgrade that changes an answer shows up.
 *
 * Promises: every operation runs in a fresh world of each kind and is answered as one line, paths
 * relative to the layout (`$BASE`), errors by their code, and for operations that create or move
 * something, where it ended up.
 */
import { type Modes, type World, diskWorld, memfsWorld } from "./world.js";

export interface Operation {
  name: string;
  tree: readonly string[];
  modes?: Modes;
  /** What the operation does, answered as one line. */
  run(world: World): Promise<string>;
}

/** The one layout most rows use: a workspace, an outside directory, and a link from one to the other. */
const LAYOUT = ["ws/a.txt", "out/secret.txt", "out/inner/", "ws/link => ../out/inner"];

/** A path in the world, joined as text: `path.join` would collapse `link/..` before the fs saw it. */
const pathIn = (world: World, path: string) => `${world.base}/${path}`;

const exists = async (world: World, path: string) =>
  world.fs.lstat(pathIn(world, path)).then(
    (stats) => (stats.isSymbolicLink() ? "link" : stats.isDirectory() ? "dir" : "file"),
    () => "missing",
  );
const kindOf = (stats: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }) =>
  stats.isSymbolicLink() ? "a symlink" : stats.isDirectory() ? "a directory" : stats.isFile() ? "a file" : "something else";

export const OPERATIONS: readonly Operation[] = [
  {
    name: "readFile `ws/link/../secret.txt`, `link -> ../out/inner`",
    tree: LAYOUT,
    run: async (world) => world.fs.readFile(pathIn(world, "ws/link/../secret.txt"), "utf8"),
  },
  { name: "realpath `ws/link/..`", tree: LAYOUT, run: async (world) => world.fs.realpath(pathIn(world, "ws/link/..")) },
  { name: "realpath `ws/link/../secret.txt`", tree: LAYOUT, run: async (world) => world.fs.realpath(pathIn(world, "ws/link/../secret.txt")) },
  { name: "stat `ws/a.txt/` (a trailing slash on a file)", tree: LAYOUT, run: async (world) => kindOf(await world.fs.stat(pathIn(world, "ws/a.txt/"))) },
  { name: "lstat `ws/link/` (a trailing slash on a link to a directory)", tree: LAYOUT, run: async (world) => kindOf(await world.fs.lstat(pathIn(world, "ws/link/"))) },
  {
    name: "mkdir -p `ws/dangling/x`, `dangling -> ../out/newdir`",
    tree: [...LAYOUT, "ws/dangling => ../out/newdir"],
    run: async (world) => {
      await world.fs.mkdir(pathIn(world, "ws/dangling/x"), { recursive: true });
      return `made; out/newdir is ${await exists(world, "out/newdir")}, ws/dangling is ${await exists(world, "ws/dangling")}`;
    },
  },
  {
    name: "writeFile `ws/dangling`, `dangling -> ../out/new.txt`",
    tree: [...LAYOUT, "ws/dangling => ../out/new.txt"],
    run: async (world) => {
      await world.fs.writeFile(pathIn(world, "ws/dangling"), "x");
      return `written; out/new.txt is ${await exists(world, "out/new.txt")}, ws/dangling is ${await exists(world, "ws/dangling")}`;
    },
  },
  {
    name: "open `ws/link/../new.txt` for writing (`wx`)",
    tree: LAYOUT,
    run: async (world) => {
      await (await world.fs.open(pathIn(world, "ws/link/../new.txt"), "wx")).close();
      return `created; out/new.txt is ${await exists(world, "out/new.txt")}, ws/new.txt is ${await exists(world, "ws/new.txt")}`;
    },
  },
  {
    name: "rename `ws/a.txt` to `ws/link/../moved.txt`",
    tree: LAYOUT,
    run: async (world) => {
      await world.fs.rename(pathIn(world, "ws/a.txt"), pathIn(world, "ws/link/../moved.txt"));
      return `moved; out/moved.txt is ${await exists(world, "out/moved.txt")}, ws/moved.txt is ${await exists(world, "ws/moved.txt")}`;
    },
  },
  {
    name: "realpath of a link chain `ws/c1 -> c2 -> ../out/inner`, then `..`",
    tree: [...LAYOUT, "ws/c1 => c2", "ws/c2 => ../out/inner"],
    run: async (world) => world.fs.realpath(pathIn(world, "ws/c1/..")),
  },
  { name: "realpath of a dangling link", tree: [...LAYOUT, "ws/dangling => ../out/none"], run: async (world) => world.fs.realpath(pathIn(world, "ws/dangling")) },
  { name: "realpath of a link loop `ws/loop -> loop`", tree: [...LAYOUT, "ws/loop => loop"], run: async (world) => world.fs.realpath(pathIn(world, "ws/loop")) },
  {
    name: "readFile `ws/locked/s.txt`, `locked` mode 000",
    tree: [...LAYOUT, "ws/locked/s.txt"],
    modes: [["ws/locked", 0o000]],
    run: async (world) => world.fs.readFile(pathIn(world, "ws/locked/s.txt"), "utf8"),
  },
  {
    name: "lstat `ws/locked/missing`, `locked` mode 000",
    tree: [...LAYOUT, "ws/locked/s.txt"],
    modes: [["ws/locked", 0o000]],
    run: async (world) => kindOf(await world.fs.lstat(pathIn(world, "ws/locked/missing"))),
  },
  {
    name: "realpath `ws/search/s.txt`, `search` mode 0311 (search, no read)",
    tree: [...LAYOUT, "ws/search/s.txt"],
    modes: [["ws/search", 0o311]],
    run: async (world) => world.fs.realpath(pathIn(world, "ws/search/s.txt")),
  },
  {
    name: "readdir `ws/search`, mode 0311",
    tree: [...LAYOUT, "ws/search/s.txt"],
    modes: [["ws/search", 0o311]],
    run: async (world) => (await world.fs.readdir(pathIn(world, "ws/search"))).join(", "),
  },
];

export interface Divergence {
  operation: string;
  disk: string;
  memfs: string;
}

async function answer(operation: Operation, world: World): Promise<string> {
  try {
    return (await operation.run(world)).replaceAll(world.base, "$BASE");
  } catch (error) {
    return `error ${(error as NodeJS.ErrnoException).code ?? String(error)}`;
  } finally {
    await world.dispose();
  }
}

export async function replayDivergences(operations: readonly Operation[] = OPERATIONS): Promise<Divergence[]> {
  const rows: Divergence[] = [];
  for (const operation of operations)
    rows.push({
      operation: operation.name,
      disk: await answer(operation, await diskWorld(operation.tree, operation.modes)),
      memfs: await answer(operation, await memfsWorld(operation.tree, operation.modes)),
    });
  return rows;
}
