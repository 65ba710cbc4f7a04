/**
 * The lesson docs/memfs.md teaches: a containment suite that runs on memfs judges a different
 * filesystem than the one the tools will run on. Each scenario is one call of a target's
 * `workspacePath` (the contract's `fsApi` pointing at memfs, or at the disk) and one judgement of its
 * answer by the same world's own `realpath`, exactly what a memfs-only suite would write.
 *
 * Promises: both worlds hold the same tree at the same absolute path (the disk one exists while the
 * memfs one runs, so a target that ignores `fsApi` still finds its root), modes included; a scenario
 * fails a target when it accepts a path that its world resolves outside the root, or behind a
 * directory the world refuses to search.
 * Does not promise: that memfs or the disk is right; the table shows where they disagree.
 */
import { dirname, resolve } from "node:path";
import type { FsApi } from "../../gates/workspace-path.js";
import { loadTarget, referenceTarget } from "../operations/target.js";
import { type Modes, type World, diskWorld, memfsWorld } from "./world.js";

export interface Scenario {
  name: string;
  /** `makefs` lines under the layout; the root handed over is `ws`. */
  tree: readonly string[];
  modes?: Modes;
  candidate: string;
  creating: boolean;
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: "`..` after a link: write `link/../secret.txt`, `link -> ../out/inner`",
    tree: ["ws/", "out/secret.txt", "out/inner/", "ws/link => ../out/inner"],
    candidate: "link/../secret.txt",
    creating: true,
  },
  { name: "a link out: read `link/x`, `link -> ../out/inner`", tree: ["ws/", "out/inner/x", "ws/link => ../out/inner"], candidate: "link/x", creating: false },
  { name: "a similar prefix: read `../ws-other/secret.txt`", tree: ["ws/", "ws-other/secret.txt"], candidate: "../ws-other/secret.txt", creating: false },
  { name: "a dangling link out: write `dangling`, `dangling -> ../out/new.txt`", tree: ["ws/", "out/", "ws/dangling => ../out/new.txt"], candidate: "dangling", creating: true },
  {
    name: "a directory nobody may search: write `locked/new.txt`, `locked` mode 000",
    tree: ["ws/locked/"],
    modes: [["ws/locked", 0o000]],
    candidate: "locked/new.txt",
    creating: true,
  },
];

export type WorkspacePath = (root: string, candidate: string, creating: boolean, fsApi?: FsApi) => Promise<string>;

/** Where `path` lands in `world`, as a memfs-only suite would ask: realpath, else a dangling link's target, else the parent. */
async function landing(world: World, path: string, hops = 0): Promise<string> {
  try {
    return await world.fs.realpath(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" || hops > 40 || dirname(path) === path) return `(${code ?? "error"})`;
  }
  const stats = await world.fs.lstat(path).catch(() => undefined);
  if (stats?.isSymbolicLink() === true) return landing(world, resolve(dirname(path), await world.fs.readlink(path)), hops + 1);
  return landing(world, dirname(path), hops);
}

/** Why the answer fails the scenario in this world, or undefined. */
async function judge(world: World, scenario: Scenario, workspacePath: WorkspacePath): Promise<string | undefined> {
  const root = `${world.base}/ws`;
  let answer: string;
  try {
    answer = await workspacePath(root, scenario.candidate, scenario.creating, world.fs as FsApi);
  } catch {
    return undefined;
  }
  const lands = await landing(world, answer);
  if (lands.startsWith("(")) return `accepted a path this world cannot resolve ${lands}`;
  return lands === root || lands.startsWith(`${root}/`) ? undefined : `accepted a path that lands on ${lands.replace(world.base, "$BASE")}`;
}

export interface LessonRow {
  target: string;
  /** Scenarios the target fails, by name, in each world. */
  memfs: string[];
  disk: string[];
}

export async function runLesson(targets: readonly { name: string; workspacePath: WorkspacePath }[], scenarios: readonly Scenario[] = SCENARIOS): Promise<LessonRow[]> {
  const rows: LessonRow[] = [];
  for (const { name, workspacePath } of targets) {
    const row: LessonRow = { target: name, memfs: [], disk: [] };
    for (const scenario of scenarios) {
      const disk = await diskWorld(scenario.tree, scenario.modes);
      try {
        const memfs = await memfsWorld(scenario.tree, scenario.modes, disk.base);
        try {
          if ((await judge(memfs, scenario, workspacePath)) !== undefined) row.memfs.push(scenario.name);
        } finally {
          await memfs.dispose();
        }
        if ((await judge(disk, scenario, workspacePath)) !== undefined) row.disk.push(scenario.name);
      } finally {
        await disk.dispose();
      }
    }
    rows.push(row);
  }
  return rows;
}

/** The reference and each named fork of `fixtures/vulnerable/` that exports `workspacePath`. */
export async function lessonTargets(forks: readonly string[]): Promise<{ name: string; workspacePath: WorkspacePath }[]> {
  const targets = [{ name: "reference", target: await referenceTarget() }];
  for (const fork of forks) targets.push({ name: fork, target: await loadTarget(`fixtures/vulnerable/${fork}.ts`) });
  return targets.flatMap(({ name, target }) => (target.workspacePath === undefined ? [] : [{ name, workspacePath: target.workspacePath }]));
}
