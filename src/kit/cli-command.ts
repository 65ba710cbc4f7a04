/**
 * One subcommand of the `workspace-gates` CLI.
 *
 * Promises (of every command): `run` resolves to the process exit code (0 success, 1 the check found
 * a problem, 2 the command could not run: bad flag, module that fails to load) and writes its report to
 * the given streams; it does not call `process.exit` itself, so tests can run it in-process. A bad
 * flag is said in the CLI's own words: the flag, the closest known one when it is near ("did you mean
 * --seed?"), never Node's advice to pass it after `--` (which starts an MCP server's command here).
 */
import { open, rm } from "node:fs/promises";
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
  /** One line: what the command takes, printed under a usage error. */
  synopsis: string;
  /** Every flag, for `--help`. */
  usage: string;
  run(argv: readonly string[], io: CliIo): Promise<number>;
}

/** Thrown for a bad flag or argument; the CLI prints the message and the synopsis and exits 2. */
export class UsageError extends Error {}

/**
 * `util.parseArgs` (strict, its default), with its complaints (unknown flag, missing value, a value
 * given to a flag that takes none, a stray argument) said as a UsageError of one line in the CLI's
 * words.
 */
export function parseCommandArgs<const Config extends ParseArgsConfig>(config: Config): ReturnType<typeof parseArgs<Config>> {
  const options = config.options ?? {};
  const known = Object.keys(options);
  const args = config.args ?? [];
  for (let at = 0; at < args.length; at++) {
    const arg = args[at] as string;
    if (arg === "--") break;
    const flag = /^--([^=]+)/.exec(arg)?.[1] ?? /^-([^-\d])/.exec(arg)?.[1];
    if (flag === undefined) continue;
    const long = arg.startsWith("--") ? flag : Object.entries(options).find(([, option]) => option.short === flag)?.[0];
    if (long !== undefined && known.includes(long)) {
      // The next word is this flag's value, whatever it looks like (`--seed -5`).
      if (options[long]?.type === "string" && !arg.includes("=")) at += 1;
      continue;
    }
    const near = closest(flag, known);
    throw new UsageError(`unknown flag ${arg.split("=")[0]}${near === undefined ? "" : ` (did you mean --${near}?)`}`);
  }
  try {
    return parseArgs(config);
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    const flag = /'(--?[^' ]+)/.exec(message ?? "")?.[1] ?? "a flag";
    if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && /does not take an argument/.test(message ?? "")) throw new UsageError(`${flag} takes no value`);
    if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") throw new UsageError(`${flag} needs a value (write ${flag}=VALUE for one that starts with -)`);
    if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") throw new UsageError(`unexpected argument ${/'([^']*)'/.exec(message ?? "")?.[1] ?? ""}`);
    throw new UsageError(message ?? String(error));
  }
}

/** The name among `names` that `typed` most likely meant: within two edits, or one it begins. */
export function closest(typed: string, names: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = name.startsWith(typed) || typed.startsWith(name) ? 1 : editDistance(typed, name);
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** Levenshtein's distance: the insertions, deletions and substitutions from one to the other. */
function editDistance(from: string, to: string): number {
  let previous = Array.from({ length: to.length + 1 }, (_, index) => index);
  for (let row = 1; row <= from.length; row++) {
    const current = [row];
    for (let column = 1; column <= to.length; column++) {
      const substitution = (previous[column - 1] as number) + (from[row - 1] === to[column - 1] ? 0 : 1);
      current.push(Math.min((previous[column] as number) + 1, (current[column - 1] as number) + 1, substitution));
    }
    previous = current;
  }
  return previous[to.length] as number;
}

/**
 * Why `file` cannot be written, found before a long run rather than after it: opened for appending
 * (which changes nothing in an existing file) and removed again if this made it.
 */
export async function unwritable(file: string): Promise<string | undefined> {
  let created = false;
  try {
    const handle = await open(file, "wx").then(
      (fresh) => {
        created = true;
        return fresh;
      },
      async (error: NodeJS.ErrnoException) => {
        if (error.code === "EEXIST") return open(file, "a");
        throw error;
      },
    );
    await handle.close();
    if (created) await rm(file);
    return undefined;
  } catch (error) {
    return messageOf(error);
  }
}

/** What an error says, as one line of a command's message. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
