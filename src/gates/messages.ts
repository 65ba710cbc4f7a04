/**
 * Every fixed text the gates and tools answer with, defined once. Tests, the audit's conformance
 * properties and docs/contract.md quote these; a fork that keeps the chapter's wording can prove it.
 */

/** Gate 2 (`stringField`): the tool's required string fields are missing or not strings. */
export const INVALID_READ_INPUT = "invalid read input: path must be a string";
export const INVALID_WRITE_INPUT = "invalid write input: path and content must be strings";
export const INVALID_BASH_INPUT = "invalid bash input: command must be a string";

/** Gate 3 (`workspacePath`): the checked path is not inside the workspace root. */
export const ESCAPE_MESSAGE = "path escapes workspace";
/** Gate 3: a NUL byte, refused before any filesystem call (the fs API would throw on it anyway). */
export const NUL_MESSAGE = "path must not contain NUL bytes";

/** read and write handle regular files only: a directory, FIFO, device or socket is refused. */
export const NOT_REGULAR_FILE = "not a regular file";

/** The approval hook `denyBashByDefault`: bash runs only under an explicit policy. */
export const BASH_NEEDS_POLICY = "bash requires an explicit approval policy";

/** Every tool: the caller's `signal` is neither absent nor an AbortSignal, so it could never fire. */
export const INVALID_SIGNAL = "signal must be an AbortSignal; nothing was done";

/** read: the caller's signal fired before or while the file was read. */
export const READ_ABORTED = "aborted: the caller's AbortSignal fired; the read was stopped";

/** write: the caller's signal fired before the new content replaced the file. */
export const WRITE_ABORTED = "aborted: the caller's AbortSignal fired; nothing was written";

/** write: a boundary's `creating` answered an `existing` that is neither the path nor one of its ancestors. */
export const NOT_AN_ANCESTOR = "the boundary's nearest existing ancestor is not an ancestor of the path; nothing was written";

/** write: the target resolves through a name that Node cannot spell back exactly (not valid UTF-8). */
export const NOT_UTF8_NAME = "the file's real path is not valid UTF-8";

/** The agent loop: the caller's signal aborted before this call started, so neither hook nor tool ran. */
export const ABORTED_BEFORE_CALL = "aborted: the caller's AbortSignal fired before the call started; it did not run";
