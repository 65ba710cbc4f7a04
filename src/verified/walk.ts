/**
 * Where a descriptor walk stands: the directories it holds open from the pinned root down, and the
 * names it took, so each next step names one entry of a directory it holds.
 *
 * Promises: `entry(name)` is the `/proc/self/fd/<dirfd>/<name>` string of the directory the walk
 * stands in (the root descriptor when it holds none), with the logical path for messages; `up()` is
 * `..` taken back along the walk itself, so it returns to the directory the walk came from even if
 * that has been moved, and throws `path escapes workspace` at the root; `targetComponents` turns a
 * symlink's target into components to walk, going back to the root for an absolute target, which
 * must spell the root's real path component by component (anything else escapes). `close()`
 * releases every directory it holds, never the root.
 * Does not promise: that the logical path is where the directories are now; it is how they were named.
 */
import type { FileHandle } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { throughDescriptor } from "./proc-fd.js";
import { ESCAPE_MESSAGE } from "../gates/messages.js";

export interface Entry {
  /** `/proc/self/fd/<dirfd>/<name>`: what the syscalls are given. */
  proc: string;
  /** The path a person would write, for error messages. */
  logical: string;
}

/** A path as the components to walk: empty parts and `.` dropped, `..` kept for the walk to take. */
export function components(path: string): string[] {
  return path.split("/").filter((part) => part !== "" && part !== ".");
}

/** The directories held open from the root down to where the walk stands, with their names. */
export class Walk {
  private readonly held: { handle: FileHandle; name: string }[] = [];

  constructor(
    private readonly rootFd: number,
    readonly rootReal: string,
  ) {}

  logical(name: string): string {
    return join(this.rootReal, ...this.held.map((directory) => directory.name), name);
  }

  entry(name: string): Entry {
    return { proc: throughDescriptor(this.held.at(-1)?.handle.fd ?? this.rootFd, name), logical: this.logical(name) };
  }

  push(handle: FileHandle, name: string): void {
    this.held.push({ handle, name });
  }

  /** `..`: back to the directory this walk came from, which it still holds; never above the root. */
  async up(): Promise<void> {
    const left = this.held.pop();
    if (left === undefined) throw new Error(ESCAPE_MESSAGE);
    await left.handle.close();
  }

  /** The components to walk for a symlink's target, moving back to the root for an absolute one. */
  async targetComponents(target: string): Promise<string[]> {
    const parts = components(target);
    if (!isAbsolute(target)) return parts;
    const rootParts = components(this.rootReal);
    if (!rootParts.every((part, index) => parts[index] === part)) throw new Error(ESCAPE_MESSAGE);
    await this.close();
    return parts.slice(rootParts.length);
  }

  async close(): Promise<void> {
    for (const { handle } of this.held.splice(0).reverse()) await handle.close();
  }
}
