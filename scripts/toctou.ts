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
  if (!(error instanceof UsageError)) throw error;
  io.stderr(`${error.message}\n\n${toctouCommand.usage}`);
  process.exitCode = 2;
}
