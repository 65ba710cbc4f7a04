/**
 * One subcommand of the `workspace-gates` CLI.
 *
 * Promises (of every command): `run` resolves to the process exit code (0 success, 1 the check found
 * a problem, 2 the command could not run: bad flag, module that fails to load) and writes its report to
 * the given streams; it does not call `process.exit` itself, so tests can run it in-process.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /**
   * How the user started this command, for the replay lines it prints: `npx workspace-gates audit`,
   * `npm run audit --`, `node dist/kit/bin.js audit`. Default: `npx workspace-gates <command>`.
   */
  invocation?: (command: string) => string;
  /** stderr is a terminal: progress may redraw one line instead of printing one per step. */
  stderrIsTTY?: boolean;
}

/** The replay prefix of `command` as `io` was started. */
export function invocationOf(io: CliIo, command: string): string {
  return io.invocation?.(command) ?? `npx workspace-gates ${command}`;
}

export interface CliCommand {
  name: string;
  summary: string;
  usage: string;
  run(argv: readonly string[], io: CliIo): Promise<number>;
}

/** Thrown for a bad flag or argument; the CLI prints the message and the usage and exits 2. */
export class UsageError extends Error {}

/**
 * `util.parseArgs` (strict, its default), with its complaints (unknown flag, missing value, stray positional)
 * turned into a UsageError.
 */
export function parseCommandArgs<const Config extends ParseArgsConfig>(config: Config): ReturnType<typeof parseArgs<Config>> {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}
