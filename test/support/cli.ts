import { main } from "../../src/kit/cli.js";

/** Runs the CLI in process, as `workspace-gates ARGV...`, and collects what it printed. */
export async function cli(...argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) });
  return { code, stdout, stderr };
}
