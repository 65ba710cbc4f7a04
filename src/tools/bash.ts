/**
 * The `bash` tool: one shell command with the real workspace root as its working directory, bounded
 * by gate 4's execution limits.
 *
 * Promises: input without a string `command` is refused with the chapter's message, a command with a
 * NUL byte with `command must not contain NUL bytes`; a signal already aborted means the command is
 * never started; otherwise the command runs as `$SHELL -c command` (`/bin/sh` when SHELL is unset) in
 * the real root, is killed after `timeoutMs` or once stdout or stderr passes `maxBuffer` bytes, and is
 * killed when `signal` aborts; every failure names the limit or cause that ended it (timeout,
 * maxBuffer and which stream, aborted, exit code, signal, shell not found or not executable, command
 * too long); output over `maxOutputChars` is cut with a marker. When the shell exits but a background
 * process still holds stdout or stderr, reading stops at `timeoutMs` and the answer is a timeout error.
 * Does not promise: any confinement. The command runs with all the rights of this process and may read
 * or write anywhere (`cd /etc && cat passwd` works). Killing stops the shell, not what it started in
 * the background: such a process outlives the timeout and the abort and keeps its rights (see
 * test/bash-cancellation.test.ts). Decide whether bash runs at all in the approval hook (approval.ts).
 */
import { type ExecFileOptionsWithStringEncoding, execFile } from "node:child_process";
import { failure } from "../gates/failure.js";
import { stringField } from "../gates/fields.js";
import { schema } from "../gates/schema.js";
import type { Tool } from "../gates/tool.js";
import { truncateHead } from "../gates/truncate.js";
import type { Boundary } from "../gates/workspace-path.js";
import { INVALID_BASH_INPUT } from "../gates/messages.js";


export interface BashLimits {
  /** Kill the command after this many milliseconds (chapter: 10 s). */
  timeoutMs: number;
  /** Kill the command once stdout or stderr holds more than this many bytes (chapter: 64 KiB). */
  maxBuffer: number;
  /** Cut the reported `stdout + stderr` to this many characters (chapter: 64 KiB). */
  maxOutputChars: number;
}

export const DEFAULT_BASH_LIMITS: BashLimits = {
  timeoutMs: 10_000,
  maxBuffer: 64 * 1024,
  maxOutputChars: 64 * 1024,
};

/**
 * Merges overrides into the chapter's limits. A limit that is not a positive number would silently
 * switch a guard off (`timeout: 0` means "never" to execFile), so it is a construction error.
 */
export function bashLimits(overrides: Partial<BashLimits> = {}): BashLimits {
  const limits = { ...DEFAULT_BASH_LIMITS };
  for (const key of Object.keys(limits) as (keyof BashLimits)[]) {
    const value = overrides[key];
    if (value === undefined) continue;
    if (!(Number.isFinite(value) && value > 0)) throw new RangeError(`bash limit ${key} must be a positive number, got ${String(value)}`);
    limits[key] = value;
  }
  return limits;
}

// SIGKILL, not the default SIGTERM: a shell that traps TERM would otherwise outlive its timeout and
// keep the agent waiting forever.
const KILL_SIGNAL = "SIGKILL";

export function bashTool(boundary: Boundary, limits: BashLimits = DEFAULT_BASH_LIMITS): Tool {
  return {
    spec: {
      name: "bash",
      description: `Run a shell command with the workspace root as working directory. Killed after ${limits.timeoutMs} ms or ${limits.maxBuffer} bytes of output on either stream; stdout and stderr come back together.`,
      inputSchema: schema(["command"], {
        command: { type: "string", description: "The command, run as $SHELL -c command." },
      }),
    },
    async execute(input, signal) {
      const command = stringField(input, "command");
      if (command === undefined) return { content: INVALID_BASH_INPUT, isError: true };
      if (command.includes("\0")) return failure(new Error("command must not contain NUL bytes"), "bash");
      const shell = process.env.SHELL ?? "/bin/sh";
      let cwd: string;
      try {
        // The chapter's way to the real root: the boundary applied to "." itself.
        // Stryker disable next-line StringLiteral: resolve(root, "") is resolve(root, "."), the root itself
        cwd = await boundary(".", false);
      } catch (error) {
        // Reported as it is: the exec rules below would read the root's ENOENT as a missing shell.
        return failure(error, "bash");
      }
      // Checked after the last await before the spawn: execFile given an aborted signal still
      // spawns the command and only kills it a tick later, by which time it may have run.
      if (signal?.aborted === true) return failure(new Error(ABORTED_BEFORE_START), "bash");
      try {
        const { stdout, stderr, readingCut } = await runShell(shell, command, {
          cwd,
          timeout: limits.timeoutMs,
          maxBuffer: limits.maxBuffer,
          killSignal: KILL_SIGNAL,
          encoding: "utf8",
          signal,
        });
        if (readingCut) return failure(withOutput(heldOpenRule(limits), stdout, stderr, limits), "bash");
        return { content: truncateHead(`${stdout}${stderr}`, limits.maxOutputChars) };
      } catch (error) {
        return failure(explainExecFailure(error, shell, limits), "bash");
      }
    },
  };
}

const ABORTED_BEFORE_START = "aborted: the caller's AbortSignal fired before the command started; it did not run";

interface ShellRun {
  stdout: string;
  stderr: string;
  /**
   * The shell exited cleanly, but its stdout or stderr never reached end-of-file: execFile's timeout
   * found the shell gone and destroyed the pipes a background process was still holding, then
   * reported success. Only that kill ends a stream without an error, so this is the timeout firing.
   */
  readingCut: boolean;
}

/** execFile as a promise that also tells whether the output was read to its end. */
function runShell(shell: string, command: string, options: ExecFileOptionsWithStringEncoding): Promise<ShellRun> {
  return new Promise((resolve, reject) => {
    const child = execFile(shell, ["-c", command], options, (error, stdout, stderr) => {
      if (error !== null) reject(Object.assign(error, { stdout, stderr }));
      else resolve({ stdout, stderr, readingCut: child.stdout?.readableEnded === false || child.stderr?.readableEnded === false });
    });
  });
}

function heldOpenRule(limits: BashLimits): string {
  return `timeout: the shell exited, but a background process kept stdout or stderr open; stopped reading after ${limits.timeoutMs} ms (that process was not killed)`;
}

interface ExecFailure {
  name?: string;
  message?: string;
  code?: number | string | null;
  signal?: NodeJS.Signals | null;
  killed?: boolean;
  stdout?: string;
  stderr?: string;
}

/** Names the rule that ended the command, then appends whatever output it had produced. */
function explainExecFailure(error: unknown, shell: string, limits: BashLimits): Error {
  const cause = (typeof error === "object" && error !== null ? error : {}) as ExecFailure;
  const rule = execFailureRule(cause, shell, limits) ?? String(cause.message ?? error);
  return withOutput(rule, cause.stdout, cause.stderr, limits);
}

function withOutput(rule: string, stdout: string | undefined, stderr: string | undefined, limits: BashLimits): Error {
  const output = `${stdout ?? ""}${stderr ?? ""}`;
  return new Error(output === "" ? rule : `${rule}\n${truncateHead(output, limits.maxOutputChars)}`);
}

function execFailureRule(cause: ExecFailure, shell: string, limits: BashLimits): string | undefined {
  if (cause.name === "AbortError") return "aborted: the command was killed by the caller's AbortSignal";
  if (cause.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER") {
    // Node's message is "stdout maxBuffer length exceeded" or the same with stderr.
    const stream = cause.message?.startsWith("stderr") === true ? "stderr" : "stdout";
    return `maxBuffer exceeded: ${stream} passed ${limits.maxBuffer} bytes; the command was killed`;
  }
  if (cause.killed === true) return `timeout: the command was killed after ${limits.timeoutMs} ms`;
  if (typeof cause.code === "number") return `exit code ${cause.code}`;
  if (typeof cause.signal === "string") return `killed by signal ${cause.signal}`;
  // The spawn failures below come before any output, so there is none to append.
  if (shell === "") return "shell not found: SHELL is set to the empty string";
  if (cause.code === "ENOENT") return `shell not found: ${shell}`;
  if (cause.code === "EACCES") return `shell not executable: ${shell}`;
  if (cause.code === "E2BIG") return "command too long: the kernel refused to start it (E2BIG)";
  return undefined;
}
