// Counting the descriptors this process holds open, through /proc/self/fd (Linux).
import { readdir, readlink } from "node:fs/promises";

/** How many descriptors this process holds open on `path`: Linux lists each in /proc/self/fd by its target. */
export async function descriptorsOn(path: string): Promise<number> {
  let count = 0;
  for (const fd of await readdir("/proc/self/fd")) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => "");
    if (target === path) count += 1;
  }
  return count;
}
