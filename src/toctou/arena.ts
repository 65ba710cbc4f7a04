/**
 * The ground a TOCTOU attack is fought on: a real directory inside the workspace (the contested name)
 * that an attacker can replace with a symlink to the canary directory outside, and put back.
 *
 * Layout, inside a sandbox from audit/sandbox.ts, for a contested name N:
 *   ws/N/                 a real directory; ws/N/secret.txt is a harmless decoy
 *   outside/dir/          the sandbox's canary directory; outside/dir/secret.txt holds SECRET
 *   scratch/N.link        a symlink to outside/dir, parked until the attacker moves it to ws/N
 *   scratch/N.dir         where the real ws/N waits while the symlink stands in its place
 *   scratch/N.evicted-K   directories the write tool made at ws/N while the name was free (race only)
 * The attacker's parking lot is the sandbox's unwatched scratch directory beside the workspace, not in
 * it, so the workspace holds nothing but the contested name.
 *
 * Promises: after `prepareArena`, ws/N is a real directory whose realpath is inside the workspace, so
 * every path check on it passes; `swapInLink` leaves ws/N a symlink to outside/dir, using only renames
 * (between its two renames the name is briefly absent: Node has no renameat2(RENAME_EXCHANGE)).
 * Does not promise: to restore the layout; the sandbox is thrown away after the demo.
 */
import { mkdir, rename, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Sandbox } from "../audit/sandbox.js";

/** The file name that both the decoy inside and the sandbox's canary in outside/dir carry. */
export const TARGET_FILE = "secret.txt";

export const DECOY = "decoy: nothing secret in here\n";

export interface Arena {
  /** ws/N: the directory the tools check, and the name the attacker fights over. */
  contested: string;
  /** outside/dir: where the symlink points; what lands here has escaped. */
  outsideTarget: string;
  parkedLink: string;
  parkedDir: string;
  /** Prefix for directories the racer moves out of its way (see racer.ts). */
  evictedPrefix: string;
}

export async function prepareArena(box: Sandbox, name: string): Promise<Arena> {
  const attackerDir = box.scratch;
  const arena: Arena = {
    contested: join(box.root, name),
    outsideTarget: join(box.outside, "dir"),
    parkedLink: join(attackerDir, `${name}.link`),
    parkedDir: join(attackerDir, `${name}.dir`),
    evictedPrefix: join(attackerDir, `${name}.evicted-`),
  };
  await mkdir(arena.contested);
  await writeFile(join(arena.contested, TARGET_FILE), DECOY);
  await symlink(arena.outsideTarget, arena.parkedLink);
  return arena;
}

/** The attacker's one move: the real directory goes to the parking lot, the symlink takes its name. */
export async function swapInLink(arena: Arena): Promise<void> {
  await rename(arena.contested, arena.parkedDir);
  await rename(arena.parkedLink, arena.contested);
}
