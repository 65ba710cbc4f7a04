/**
 * Whether this process can trust `/proc/self/fd`, checked once when verified tools are built.
 *
 * Promises: `procfsProblem()` answers `undefined` only when `/proc/self/fd` lies on a filesystem of
 * type procfs (`PROC_SUPER_MAGIC`, 0x9fa0) and a descriptor opened on `/` reads back as `/` through
 * its magic link; otherwise it answers a sentence saying what is wrong (no /proc as on macOS and
 * Windows, another filesystem mounted there, magic links that do not report the opened object).
 * Does not promise: that procfs stays mounted afterwards, or that the links see through bind mounts
 * (they report the path in this mount namespace, which is what a bind mount makes look inside).
 */
import { closeSync, constants, openSync, readlinkSync, statfsSync } from "node:fs";
import { descriptorLink, errorCode } from "./open-beneath.js";

export const PROC_SUPER_MAGIC = 0x9fa0;

export function procfsProblem(): string | undefined {
  let type: number;
  try {
    type = statfsSync("/proc/self/fd").type;
  } catch (error) {
    return `/proc/self/fd is not available (${errorCode(error) ?? String(error)})`;
  }
  if (type !== PROC_SUPER_MAGIC) return `/proc/self/fd is not on procfs (filesystem type 0x${type.toString(16)})`;
  const fd = openSync("/", constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    const reported = readlinkSync(descriptorLink(fd));
    if (reported !== "/") return `/proc/self/fd does not report what was opened (/ reads back as ${JSON.stringify(reported)})`;
  } finally {
    closeSync(fd);
  }
  return undefined;
}
