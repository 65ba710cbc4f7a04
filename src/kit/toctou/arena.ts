/**
 * The ground a TOCTOU attack is fought on: a name inside the workspace (the contested name) whose
 * occupant an attacker can replace with a symlink to somewhere outside, and, in a race, put back.
 * It is the one swap the kit has: the deterministic demo, the racer thread and the tests' swap
 * scenarios all make this move.
 *
 * Layout, inside a sandbox from audit/sandbox.ts, for a contested name N (a path under ws/ whose
 * parents are made as directories; a slash in N is a dash in the parking names):
 *   ws/N                  the occupant: a real directory holding a harmless decoy ws/N/secret.txt
 *                         (the default; or under another name), a decoy file, or nothing (the
 *                         name is free)
 *   outside/...           where the symlink points (default outside/dir, the sandbox's canary
 *                         directory, whose secret.txt holds SECRET)
 *   scratch/N.link        the symlink, parked until the attacker moves it to ws/N
 *   scratch/N.occupant    where the occupant waits while the symlink stands in its place
 *   scratch/N.evicted-K   directories a write tool made at ws/N while the name was free (race only)
 * The attacker's parking lot is the sandbox's unwatched scratch directory beside the workspace, not in
 * it, so the workspace holds nothing but the contested names, and the canary check sees only what the
 * tools did outside.
 *
 * Promises: after `prepareArena`, ws/N is the occupant, whose realpath is inside the workspace, so
 * every path check on it passes (a free name passes as a new file); `swapInLink` leaves ws/N a
 * symlink to the arena's outside target, using only renames (between its two renames the name is
 * briefly absent: Node has no renameat2(RENAME_EXCHANGE)).
 * Does not promise: to restore the layout; the sandbox is thrown away after the attack.
 */
import { renameSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Sandbox } from "../sandbox/sandbox.js";

/** The file name that both the decoy inside and the sandbox's canary in outside/dir carry. */
export const TARGET_FILE = "secret.txt";

export const DECOY = "decoy: nothing secret in here\n";

export type Occupant = "directory" | "file" | "none";

export interface ArenaOptions {
  /** What holds the contested name before the swap; a directory by default. */
  occupant?: Occupant;
  /** The absolute path the symlink points to; outside/dir by default. */
  linkTo?: string;
  /** The name of a directory occupant's decoy file: `TARGET_FILE` by default, the canary's own name. */
  decoyName?: string;
}

export interface Arena {
  /** ws/N: the name the tools check, and the name the attacker fights over. */
  contested: string;
  occupant: Occupant;
  /** A directory occupant's decoy file, by name. */
  decoyName: string;
  /** Where the symlink points: what lands or is read there has escaped. */
  outsideTarget: string;
  parkedLink: string;
  parkedOccupant: string;
  /** Prefix for directories the racer moves out of its way (see racer.ts). */
  evictedPrefix: string;
}

export async function prepareArena(box: Sandbox, name: string, options: ArenaOptions = {}): Promise<Arena> {
  const parked = join(box.scratch, name.replaceAll("/", "-"));
  const arena: Arena = {
    contested: join(box.root, name),
    occupant: options.occupant ?? "directory",
    decoyName: options.decoyName ?? TARGET_FILE,
    outsideTarget: options.linkTo ?? join(box.outside, "dir"),
    parkedLink: `${parked}.link`,
    parkedOccupant: `${parked}.occupant`,
    evictedPrefix: `${parked}.evicted-`,
  };
  await mkdir(dirname(arena.contested), { recursive: true });
  if (arena.occupant === "directory") {
    await mkdir(arena.contested);
    await writeFile(join(arena.contested, arena.decoyName), DECOY);
  } else if (arena.occupant === "file") await writeFile(arena.contested, DECOY);
  await symlink(arena.outsideTarget, arena.parkedLink);
  return arena;
}

/**
 * The attacker's one move: the occupant goes to the parking lot, the symlink takes its name.
 * Synchronous, so that a trap can make it inside a synchronous `realpath` (fs-trap.ts).
 */
export function swapInLink(arena: Arena): void {
  if (arena.occupant !== "none") renameSync(arena.contested, arena.parkedOccupant);
  renameSync(arena.parkedLink, arena.contested);
}
