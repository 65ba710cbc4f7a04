#!/usr/bin/env node
/**
 * The installed `workspace-gates` command. It runs unconditionally: npm links the bin through
 * `node_modules/.bin` (a symlink, or a shim on Windows), so comparing `import.meta.url` with
 * `process.argv[1]` would make the command silently do nothing when installed.
 */
import { type CliIo } from "./cli-command.js";
import { invocationFrom, main } from "./cli.js";

const io: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  invocation: invocationFrom(process.argv[1], process.env, process.cwd()),
  stderrIsTTY: process.stderr.isTTY === true,
};
process.exitCode = await main(process.argv.slice(2), io);
