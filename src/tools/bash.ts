/**
 * The `bash` tool: one shell command with the real workspace root as its working directory, bounded
 * by gate 4's execution limits.
 *
 * Promises: input without a string `command` is refused with the chapter's message, a command with a
 * NUL byte with `command must not contain NUL bytes`; a signal already aborted means the command is
 * never started; otherwise the command runs as `$SHELL -c command` (`/bin/sh` when SHELL is unset) in
 * the real root, is killed after `timeoutMs` or once stdout or stderr passes `maxBuffer` bytes, and is
 * killed when `signal` aborts; every failure names the rule that ended it (timeout, maxBuffer and
 * which stream, aborted, exit code, signal, shell not found or not executable, command too long);
 * output over `maxOutputChars` is cut with a marker. The shell leads a process group of its own
 * (spawned detached, so also a session: no terminal, stdin is /dev/null), and the timeout, maxBuffer
 * and the abort SIGKILL that whole group: what the command started in the background dies with it.
 * When the shell exits but a background process still holds stdout or stderr, the tool waits until
 * `timeoutMs` (or the abort), kills the group, and answers the shell's exit status when it failed, or
 * a timeout (abort) error when it exited 0, so a cut-off output is never reported as success.
 * Does not promise: any confinement. The command runs with all the rights of this process and may read
 * or write anywhere (`cd /etc && cat passwd` works). A process that leaves the group (`setsid`,
 * `setpgid`, a daemon that double-forks into a new session) is not killed, and neither is a background
 * process when the shell exits normally and nothing holds the output. Nor that nothing after an
 * output flood runs: maxBuffer fires when the tool reads past it, and the pipe (64 KiB on Linux) lets
 * the command finish a flood and start its next step first (see test/bash-cancellation.test.ts). Decide whether bash runs at all in the approval hook (approval.ts).
 */
import { spawn } from "node:child_process";
import { failure } from "../gates/failure.js";
import { callerSignal, stringField } from "../gates/fields.js";
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
      let caller: AbortSignal | undefined;
      try {
        caller = callerSignal(signal);
        // The chapter's way to the real root: the boundary applied to "." itself.
        // Stryker disable next-line StringLiteral: resolve(root, "") is resolve(root, "."), the root itself
        cwd = await boundary(".", false);
      } catch (error) {
        // Reported as it is: the spawn rules below would read the root's ENOENT as a missing shell.
        return failure(error, "bash");
      }
      // Checked after the last await before the spawn, so an aborted call never starts the command.
      if (caller?.aborted === true) return failure(new Error(ABORTED_BEFORE_START), "bash");
      try {
        const run = await runShell(shell, command, cwd, limits, caller);
        const rule = endingRule(run.ending, limits);
        if (rule === undefined) return { content: truncateHead(`${run.stdout}${run.stderr}`, limits.maxOutputChars) };
        return failure(withOutput(rule, run.stdout, run.stderr, limits), "bash");
      } catch (error) {
        return failure(new Error(spawnFailureRule(error, shell)), "bash");
      }
    },
  };
}

const ABORTED_BEFORE_START = "aborted: the caller's AbortSignal fired before the command started; it did not run";
const ABORTED = "aborted: the command was killed by the caller's AbortSignal";

type Stream = "stdout" | "stderr";

/** What ended a run: the shell's own exit, or the rule that stopped it. */
type Ending =
  | { kind: "timeout" }
  | { kind: "abort" }
  | { kind: "maxBuffer"; stream: Stream }
  /** The shell exited; `heldOpenUntil` names the rule that stopped the wait for a background process holding its output. */
  | { kind: "exit"; code: number | null; signal: NodeJS.Signals | null; heldOpenUntil?: "timeout" | "abort" };

interface ShellRun {
  ending: Ending;
  stdout: string;
  stderr: string;
}

/**
 * `shell -c command` as the leader of a new process group, its output collected up to `maxBuffer`
 * bytes per stream. Ends at the shell's exit once both streams are closed, or at the first rule that
 * fires (timeout, maxBuffer, abort), which SIGKILLs the group and stops reading at once. Rejects only
 * when the shell cannot be started.
 */
function runShell(shell: string, command: string, cwd: string, limits: BashLimits, signal: AbortSignal | undefined): Promise<ShellRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(shell, ["-c", command], { cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const chunks: Record<Stream, Buffer[]> = { stdout: [], stderr: [] };
    const sizes: Record<Stream, number> = { stdout: 0, stderr: 0 };
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    // The first call settles the run. Only the shell's close can come after it (the timer and the
    // listener are gone, the pipes destroyed), and for an exit that kills nothing: a no-op.
    const end = (ending: Ending) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      if (ending.kind !== "exit" || ending.heldOpenUntil !== undefined) killGroup(child.pid);
      // Stryker disable next-line all: frees this end of the pipes now; without it they close when the last process holding them exits, and nothing read after the first end reaches the answer
      child.stdout.destroy();
      // Stryker disable next-line all: as above, for stderr
      child.stderr.destroy();
      resolve({ ending, stdout: Buffer.concat(chunks.stdout).toString("utf8"), stderr: Buffer.concat(chunks.stderr).toString("utf8") });
    };
    // A bound that fires after the shell exited only stops the wait for whoever holds its output.
    const stopAt = (rule: "timeout" | "abort") => end(exit === undefined ? { kind: rule } : { kind: "exit", ...exit, heldOpenUntil: rule });
    const onAbort = () => stopAt("abort");
    const timer = setTimeout(() => stopAt("timeout"), limits.timeoutMs);
    signal?.addEventListener("abort", onAbort);
    for (const stream of ["stdout", "stderr"] as const) {
      child[stream].on("data", (chunk: Buffer) => {
        const room = limits.maxBuffer - sizes[stream];
        chunks[stream].push(chunk.subarray(0, room));
        sizes[stream] += chunk.length;
        if (sizes[stream] > limits.maxBuffer) end({ kind: "maxBuffer", stream });
      });
    }
    child.on("exit", (code, exitSignal) => {
      exit = { code, signal: exitSignal };
    });
    child.on("close", (code, exitSignal) => end({ kind: "exit", code, signal: exitSignal }));
    // A spawn that failed: its close follows, and settles nothing more.
    child.on("error", (error) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      reject(error);
    });
  });
}

/** SIGKILL, not SIGTERM (a shell that traps TERM would outlive its timeout), to the whole group. */
function killGroup(pid: number | undefined): void {
  try {
    if (pid !== undefined) process.kill(-pid, "SIGKILL");
  } catch {
    // ESRCH: every member of the group is gone already.
  }
}

function heldOpenRule(limits: BashLimits): string {
  return `timeout: the shell exited, but a background process kept stdout or stderr open; its process group was killed after ${limits.timeoutMs} ms`;
}

/** The rule that ended the run, or undefined when the shell exited 0 and let go of its output. */
function endingRule(ending: Ending, limits: BashLimits): string | undefined {
  if (ending.kind === "timeout") return `timeout: the command was killed after ${limits.timeoutMs} ms`;
  if (ending.kind === "abort") return ABORTED;
  if (ending.kind === "maxBuffer") return `maxBuffer exceeded: ${ending.stream} passed ${limits.maxBuffer} bytes; the command was killed`;
  // The shell's own failure is the first rule that fired, whatever held its output afterwards.
  if (ending.code !== null && ending.code !== 0) return `exit code ${ending.code}`;
  if (ending.signal !== null) return `killed by signal ${ending.signal}`;
  if (ending.heldOpenUntil === "timeout") return heldOpenRule(limits);
  if (ending.heldOpenUntil === "abort") return ABORTED;
  return undefined;
}

function withOutput(rule: string, stdout: string, stderr: string, limits: BashLimits): Error {
  const output = `${stdout}${stderr}`;
  return new Error(output === "" ? rule : `${rule}\n${truncateHead(output, limits.maxOutputChars)}`);
}

/** Why the shell could not be started; these come before any output, so there is none to append. */
function spawnFailureRule(error: unknown, shell: string): string {
  const cause = (typeof error === "object" && error !== null ? error : {}) as NodeJS.ErrnoException;
  if (shell === "") return "shell not found: SHELL is set to the empty string";
  if (cause.code === "ENOENT") return `shell not found: ${shell}`;
  if (cause.code === "EACCES") return `shell not executable: ${shell}`;
  if (cause.code === "E2BIG") return "command too long: the kernel refused to start it (E2BIG)";
  return String(cause.message ?? error);
}
