/**
 * An independent statement of "is `path` the root or below it", used as the oracle for `isInside`.
 *
 * It parses each absolute path into a device and a list of components (`.` dropped, `..` popped, never
 * above the device) and compares component lists; it never calls `node:path`. POSIX compares bytes;
 * win32 treats `\` and `/` alike, reads `C:` drives and `\\server\share` (including the `\\?\` and
 * `\\.\` device namespaces, whose "server" is `?` or `.`) as devices, and compares case-insensitively,
 * as `path.win32.relative` does.
 * Does not promise: answers for relative or drive-relative inputs (`C:foo`), which depend on a current
 * directory, or for `..` in the `\\?\` and `\\.\` namespaces, which Windows does not resolve (`\\?\`) or
 * resolves past the drive, as path.win32 does; generators do not feed those here.
 */

export function referenceInsidePosix(root: string, path: string): boolean {
  return isPrefix(normalize(root.split("/")), normalize(path.split("/")), (a, b) => a === b);
}

export function referenceInsideWin32(root: string, path: string): boolean {
  const rootParts = parseWin32(root);
  const pathParts = parseWin32(path);
  if (rootParts.device !== pathParts.device) return false;
  return isPrefix(rootParts.components, pathParts.components, (a, b) => a.toLowerCase() === b.toLowerCase());
}

function parseWin32(path: string): { device: string; components: string[] } {
  const parts = path.split(/[\\/]/);
  if (parts[0] === "" && parts[1] === "" && parts.length >= 4) {
    const [, , server = "", share = "", ...rest] = parts;
    return { device: `\\\\${server}\\${share}`.toLowerCase(), components: normalize(rest) };
  }
  const [first = "", ...rest] = parts;
  return { device: first.toLowerCase(), components: normalize(rest) };
}

function normalize(parts: readonly string[]): string[] {
  const out: string[] = [];
  for (const part of parts) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return out;
}

function isPrefix(prefix: readonly string[], whole: readonly string[], same: (a: string, b: string) => boolean): boolean {
  return prefix.length <= whole.length && prefix.every((part, index) => same(part, whole[index] as string));
}
