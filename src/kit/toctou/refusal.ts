/**
 * How the race tells a refusal from a failure the kernel reported, in any server's words.
 */
import { ESCAPE_MESSAGE } from "../../gates/messages.js";

/**
 * An operating system's error as Node, Python, Go and Rust word it: an errno name (`ENOENT`), Python's
 * `[Errno 2]`, Rust's `(os error 2)`, or the C library's text (`no such file or directory`, `too many
 * levels of symbolic links`, …), which is how a server passes on what the kernel answered.
 */
const OS_ERROR =
  /\b(ENOENT|ENOTDIR|EISDIR|ELOOP|EEXIST|ENOTEMPTY|EACCES|EPERM|EBUSY|EXDEV|EINVAL|EIO|ENAMETOOLONG|EMLINK|EROFS|ENOSPC|ETXTBSY|EBADF)\b|\[Errno \d+\]|\(os error \d+\)|no such file|not a directory|is a directory|too many (levels of )?symbolic links|file exists|directory not empty|resource busy|file name too long/i;

/**
 * Whether an error answer refuses the call rather than passing on the kernel's failure: the chapter's
 * `path escapes workspace`, or any answer in the server's own words that names no OS error ("Access
 * denied - path outside allowed directories", "refused: x leaves the workspace"). Counting only the
 * chapter's text left the column at 0 for every server worded otherwise.
 */
export function isRefusal(content: string): boolean {
  return content.endsWith(ESCAPE_MESSAGE) || !OS_ERROR.test(content);
}
