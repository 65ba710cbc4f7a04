/**
 * One tree, two filesystems: the same `makefs` layout in a real temp directory and in a memfs volume
 * at the very same absolute path, so an operation's answer can be compared string for string.
 *
 * Promises: `diskWorld` and `memfsWorld` lay out `lines` (src/kit/sandbox/tree.ts notation, `$ABS`
 * the layout directory) under `base`, files holding `file <name>`, then apply `modes` (chmod, in
 * order); both hand back the `node:fs/promises`-shaped API to act on it. memfs enforces modes for
 * every user, root included; the disk does not for root.
 * memfs is a development dependency, loaded on first use: `memfsMissing` says why a world cannot be
 * made where it is not installed (the installed audit, for one).
 * Does not promise: that memfs answers as the disk does. docs/memfs.md is the table of where it does not.
 */
import { mkdtemp, realpath, rm } from "node:fs/promises";
import * as fsPromises from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { type Tree, makefs } from "../sandbox/tree.js";

export type Promises = typeof fsPromises;

export interface World {
  readonly kind: "disk" | "memfs";
  readonly base: string;
  readonly fs: Promises;
  dispose(): Promise<void>;
}

/** `[path relative to base, mode]`, applied after the tree is laid out. */
export type Modes = readonly (readonly [string, number])[];

async function layOut(fs: Promises, base: string, tree: Tree, modes: Modes): Promise<void> {
  for (const entry of tree) {
    const path = join(base, ...entry.at);
    if (entry.kind === "dir") await fs.mkdir(path);
    else if (entry.kind === "file") await fs.writeFile(path, `file ${entry.at.join("/")}`);
    else if (entry.kind === "symlink")
      await fs.symlink(entry.target.form === "text" ? entry.target.text : join(base, ...entry.target.path), path);
  }
  for (const [at, mode] of modes) await fs.chmod(join(base, at), mode);
}

export async function diskWorld(lines: readonly string[], modes: Modes = []): Promise<World> {
  const base = await realpath(await mkdtemp(join(tmpdir(), "workspace-gates-memfs-")));
  await layOut(fsPromises, base, makefs(lines), modes);
  return {
    kind: "disk",
    base,
    fs: fsPromises,
    async dispose() {
      // Restore search rights first, so a mode-000 directory can be removed.
      for (const [at] of modes) await fsPromises.chmod(join(base, at), 0o755).catch(() => undefined);
      await rm(base, { recursive: true, force: true });
    },
  };
}

/** Why no memfs world can be made here, or undefined when memfs is installed. */
export function memfsMissing(): string | undefined {
  try {
    createRequire(import.meta.url).resolve("memfs");
    return undefined;
  } catch {
    return "memfs is not installed (npm i -D memfs), and the permission faults are served from it";
  }
}

/** A memfs volume holding `base` (its parents made, mode 0755) and the tree under it. */
export async function memfsWorld(lines: readonly string[], modes: Modes = [], base = "/workspace-gates-memfs"): Promise<World> {
  const { Volume, createFsFromVolume } = await import("memfs");
  const volume = new Volume();
  volume.mkdirSync(base, { recursive: true });
  const fs = createFsFromVolume(volume).promises as unknown as Promises;
  await layOut(fs, base, makefs(lines), modes);
  return { kind: "memfs", base, fs, dispose: async () => volume.reset() };
}
