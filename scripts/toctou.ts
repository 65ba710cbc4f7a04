// `npm run toctou -- <flags>`: the toctou command on its own, until the workspace-gates CLI runs it.
import { UsageError } from "../src/cli-command.js";
import { toctouCommand } from "../src/toctou/command.js";

const io = {
  stdout: (text: string) => void process.stdout.write(text),
  stderr: (text: string) => void process.stderr.write(text),
};
try {
  // exitCode, not exit(): let stdout drain before the process ends.
  process.exitCode = await toctouCommand.run(process.argv.slice(2), io);
} catch (error) {
  // Exit 2 either way: 1 is reserved for "an escape was seen".
  io.stderr(error instanceof UsageError ? `${error.message}\n\n${toctouCommand.usage}` : `${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 2;
}
