/**
 * The `workspace-gates` command: `audit` (attack an implementation), `merge` (its shards into one
 * verdict) and `toctou` (show the race).
 *
 * Promises: exit codes are the command's own (see each command); an unknown command or a bad flag
 * prints the usage and exits 2.
 */
import { auditCommand } from "./audit/command.js";
import { mergeCommand } from "./audit/merge.js";
import { type CliCommand, type CliIo, UsageError } from "./cli-command.js";
import { toctouCommand } from "./toctou/command.js";

const COMMANDS: readonly CliCommand[] = [auditCommand, mergeCommand, toctouCommand];

const USAGE = `usage: workspace-gates <command> [options]

${COMMANDS.map((command) => `  ${command.name.padEnd(8)} ${command.summary}`).join("\n")}

workspace-gates <command> --help shows a command's options.`;

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (command === undefined) {
    const help = name === undefined || name === "--help" || name === "-h";
    (help ? io.stdout : io.stderr)(`${help ? "" : `unknown command: ${name}\n`}${USAGE}\n`);
    return help ? 0 : 2;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    io.stdout(`${command.usage}\n`);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`${command.name}: ${error.message}\n${command.usage}\n`);
    return 2;
  }
}
