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
