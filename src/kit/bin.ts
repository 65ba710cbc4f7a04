#!/usr/bin/env node
/**
 * The installed `workspace-gates` command. It runs unconditionally: npm links the bin through
 * `node_modules/.bin` (a symlink, or a shim on Windows), so comparing `import.meta.url` with
 * `process.argv[1]` would make the command silently do nothing when installed.
 *
 * Once the command has answered, the process exits with its code as soon as the output is flushed:
 * a call of the module under audit that never settled (a hang the audit timed out) must not keep it
 * alive. A stdout that cannot be written (EPIPE: `| head`) stops the command as SIGTERM would, through
 * its interrupt guard, so it removes its temp files; then the process exits 2, with one line on stderr.
 */
import { type CliIo } from "./cli-command.js";
import { invocationFrom, main } from "./cli.js";

let stdoutBroken = false;
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (stdoutBroken) return;
  stdoutBroken = true;
  process.stderr.write(`workspace-gates: cannot write to stdout (${error.code ?? error.message}); output is incomplete\n`);
  if (process.listenerCount("SIGTERM") > 0) process.kill(process.pid, "SIGTERM");
  else process.exit(2);
});

const io: CliIo = {
  stdout: (text) => {
    if (!stdoutBroken) process.stdout.write(text);
  },
  stderr: (text) => process.stderr.write(text),
  invocation: invocationFrom(process.argv[1], process.env, process.cwd()),
  stderrIsTTY: process.stderr.isTTY === true,
};
const code = await main(process.argv.slice(2), io);
if (!stdoutBroken) await new Promise((flushed) => process.stdout.write("", flushed));
await new Promise((flushed) => process.stderr.write("", flushed));
process.exit(stdoutBroken ? 2 : code);
