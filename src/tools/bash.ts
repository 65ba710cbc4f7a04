/**
 * The `bash` tool: one shell command with the real workspace root as its working directory, bounded
 * by gate 4's execution limits.
 *
 * Promises: input without a string `command` is refused with the chapter's message; the command runs
 * as `$SHELL -c command` (`/bin/sh` when SHELL is unset) in the real root, is killed after `timeoutMs`
 * or once stdout or stderr passes `maxBuffer` bytes, and is killed when `signal` aborts; every failure
 * names the limit or cause that ended it; output over `maxOutputChars` is cut with a marker.
 * Does not promise: any confinement. The command runs with all the rights of this process and may read
 * or write anywhere (`cd /etc && cat passwd` works). Killing stops the shell, not what it started in
 * the background. Decide whether bash runs at all in the approval hook (approval.ts).
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { failure } from "../failure.js";
import { stringField } from "../fields.js";
import { schema } from "../schema.js";
import type { Tool } from "../tool.js";
import { truncateHead } from "../truncate.js";
import { type FsApi, checkUnderRealRoot, realRootOnce } from "../workspace-path.js";

export const INVALID_BASH_INPUT = "invalid bash input: command must be a string";

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

const execFileAsync = promisify(execFile);

// SIGKILL, not the default SIGTERM: a shell that traps TERM would otherwise outlive its timeout and
// keep the agent waiting forever.
const KILL_SIGNAL = "SIGKILL";

export function bashTool(root: string, limits: BashLimits = DEFAULT_BASH_LIMITS, fsApi?: FsApi): Tool {
  const rootReal = realRootOnce(root, fsApi);
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
      const shell = process.env.SHELL ?? "/bin/sh";
      try {
        // Checking "." against the root fixed at creation refuses to run in a root replaced since.
        const { path: cwd } = await checkUnderRealRoot(await rootReal(), ".", false, fsApi);
        const { stdout, stderr } = await execFileAsync(shell, ["-c", command], {
          cwd,
          timeout: limits.timeoutMs,
          maxBuffer: limits.maxBuffer,
          killSignal: KILL_SIGNAL,
          encoding: "utf8",
          ...(signal === undefined ? {} : { signal }),
        });
        return { content: truncateHead(`${stdout}${stderr}`, limits.maxOutputChars) };
      } catch (error) {
        return failure(explainExecFailure(error, shell, limits), "bash");
      }
    },
  };
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
  const output = `${cause.stdout ?? ""}${cause.stderr ?? ""}`;
  const rule = execFailureRule(cause, shell, limits) ?? String(cause.message ?? error);
  return new Error(output === "" ? rule : `${rule}\n${truncateHead(output, limits.maxOutputChars)}`);
}

function execFailureRule(cause: ExecFailure, shell: string, limits: BashLimits): string | undefined {
  if (cause.name === "AbortError") return "aborted: the command was killed by the caller's AbortSignal";
  if (cause.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER")
    return `maxBuffer exceeded: output passed ${limits.maxBuffer} bytes on one stream; the command was killed`;
  if (cause.killed === true) return `timeout: the command was killed after ${limits.timeoutMs} ms`;
  if (typeof cause.code === "number") return `exit code ${cause.code}`;
  if (typeof cause.signal === "string") return `killed by signal ${cause.signal}`;
  if (cause.code === "ENOENT") return `shell not found: ${shell}`;
  return undefined;
}
