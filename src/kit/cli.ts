/**
 * The `workspace-gates` command: `audit` (attack an implementation), `merge` (its shards into one
 * verdict), `toctou` (show the race) and `lesson` (exercises a student edits and the checks that grade them).
 *
 * Promises: exit codes are the command's own (see each command); an unknown command prints the
 * commands, and a bad flag one line naming it (with the closest known flag when one is near) and the
 * command's one-line synopsis, and both exit 2; `--version` prints the package's version.
 */
import { basename, extname, relative } from "node:path";
import { auditCommand } from "./audit/command/command.js";
import { mergeCommand } from "./audit/reports/merge.js";
import { type CliCommand, type CliIo, UsageError, closest } from "./cli-command.js";
import { shellWord } from "./shell-word.js";
import { toctouCommand } from "./toctou/command.js";
import { lessonCommand } from "./lesson/command.js";
import { VERSION } from "./version.js";

const COMMANDS: readonly CliCommand[] = [auditCommand, mergeCommand, toctouCommand, lessonCommand];

const USAGE = `usage: workspace-gates <command> [options]

${COMMANDS.map((command) => `  ${command.name.padEnd(8)} ${command.summary}`).join("\n")}

workspace-gates <command> --help shows a command's options; --version the version.`;

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === "--version" || name === "-v") {
    io.stdout(`${VERSION}\n`);
    return 0;
  }
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (command === undefined) {
    const help = name === undefined || name === "--help" || name === "-h";
    const near = help ? undefined : closest(name, COMMANDS.map((candidate) => candidate.name));
    (help ? io.stdout : io.stderr)(`${help ? "" : `unknown command: ${name}${near === undefined ? "" : ` (did you mean ${near}?)`}\n`}${USAGE}\n`);
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
    io.stderr(`${command.name}: ${error.message}\nusage: ${command.synopsis} (workspace-gates ${command.name} --help lists every flag)\n`);
    return 2;
  }
}

/**
 * How the user started the command, so that a printed replay line runs the same way where they ran it:
 * through an npm script of this package (`npm run audit --`), the installed bin (`npx
 * workspace-gates audit`: npm's link is named after the bin, and Windows' shim starts the file inside
 * node_modules/workspace-gates/), or a file run directly
 * (`node dist/kit/bin.js audit`, `npx tsx src/kit/bin.ts audit`), relative to the working directory.
 */
export function invocationFrom(script: string | undefined, env: NodeJS.ProcessEnv, cwd: string): (command: string) => string {
  return (command) => {
    const npmScript = env.npm_lifecycle_script;
    if (env.npm_lifecycle_event !== undefined && npmScript !== undefined && new RegExp(`bin\\.[jt]s ${command}$`).test(npmScript))
      return `npm run ${env.npm_lifecycle_event} --`;
    const installed = script === undefined || basename(script, extname(script)) === "workspace-gates" || /node_modules[\\/]workspace-gates[\\/]/.test(script);
    if (installed) return `npx workspace-gates ${command}`;
    const file = shellWord(relative(cwd, script));
    return `${extname(script) === ".ts" ? "npx tsx" : "node"} ${file} ${command}`;
  };
}
