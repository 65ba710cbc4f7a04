/**
 * Naming files through open directory descriptors, the one way plain Node can on Linux: the magic
 * links in `/proc/self/fd`.
 *
 * Promises: `throughDescriptor(fd, name)` names the entry `name` of the directory open as `fd`, so an
 * open, mkdir, readlink, lstat or unlink of that string acts in that very directory, whatever has
 * since happened to the path that led to it (the kernel jumps to the descriptor's directory instead of
 * re-reading a path: it is `openat(fd, name)`). `openedPath(fd)` is the kernel's answer to "what is
 * this descriptor now?": its current absolute path, with ` (deleted)` appended once it is unlinked.
 * `reword` puts the caller's logical path back into an fs error that names the `/proc` string.
 * Does not promise: anything without procfs at /proc (procfs.ts checks). `name` must be one path
 * component; a `/` in it would be walked by the kernel, following symlinks, so it is refused.
 */
import { readlink } from "node:fs/promises";

export function descriptorLink(fd: number): string {
  return `/proc/self/fd/${fd}`;
}

export function throughDescriptor(fd: number, name: string): string {
  if (name === "" || name === "." || name === ".." || name.includes("/"))
    throw new Error(`not a single path component: ${JSON.stringify(name)}`);
  return `${descriptorLink(fd)}/${name}`;
}

export async function openedPath(fd: number): Promise<string> {
  return readlink(descriptorLink(fd));
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
