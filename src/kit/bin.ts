#!/usr/bin/env node
/**
 * The installed `workspace-gates` command. It runs unconditionally: npm links the bin through
 * `node_modules/.bin` (a symlink, or a shim on Windows), so comparing `import.meta.url` with
 * `process.argv[1]` would make the command silently do nothing when installed.
 *
 * Once the command has answered, the process exits with its code as soon as the output is flushed:
 * a call of the module under audit that never settled (a hang the audit timed out) must not keep it
 * alive. A stdout that cannot be written (EPIPE: `| head`) ends it with exit 2 and one line on stderr.
 */
import { type CliIo } from "./cli-command.js";
import { invocationFrom, main } from "./cli.js";

process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  process.stderr.write(`workspace-gates: cannot write to stdout (${error.code ?? error.message}); output is incomplete\n`);
  process.exit(2);
});

const io: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  invocation: invocationFrom(process.argv[1], process.env, process.cwd()),
  stderrIsTTY: process.stderr.isTTY === true,
};
const code = await main(process.argv.slice(2), io);
await new Promise((flushed) => process.stdout.write("", flushed));
await new Promise((flushed) => process.stderr.write("", flushed));
process.exit(code);
