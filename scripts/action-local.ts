// `npm run action:local -- --workflow FILE --repo DIR [--job NAME]`: runs a workflow of your repository
// on this machine as test/installed/action.check.ts runs the README's (test/support/action-runner.ts):
// this repository's tracked files play the action's checkout at its ref, and a copy of DIR's tracked
// files the runner's workspace, both in a temp folder removed at the end; DIR itself is not touched.
// Steps of other actions (checkout, setup-node, setup-python, upload-sarif) are listed, not run: the
// workspace is already checked out, and Node and your server's toolchain are this machine's.
import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs, promisify } from "node:util";
import { parse } from "yaml";
import { Runner, type Step } from "../test/support/action-runner.js";

const run = promisify(execFile);
const USAGE = "usage: npm run action:local -- --workflow FILE --repo DIR [--job NAME]";

/** The files git tracks (and untracked ones it does not ignore) in `repository`, copied into `into`. */
async function copyTracked(repository: string, into: string): Promise<void> {
  const { stdout } = await run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: repository, maxBuffer: 1 << 26 });
  for (const file of stdout.split("\0").filter((name) => name !== "")) {
    await mkdir(join(into, dirname(file)), { recursive: true });
    await copyFile(join(repository, file), join(into, file)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error; // deleted in the work tree, not yet in the index
    });
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { workflow: { type: "string" }, repo: { type: "string" }, job: { type: "string" } } });
  if (values.workflow === undefined || values.repo === undefined) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const workflow = parse(await readFile(values.workflow, "utf8")) as { jobs?: Record<string, { steps?: Step[] }> };
  const jobs = Object.keys(workflow.jobs ?? {});
  const name = values.job ?? (jobs.length === 1 ? jobs[0] : undefined);
  const steps = name === undefined ? undefined : workflow.jobs?.[name]?.steps;
  if (steps === undefined) {
    process.stderr.write(`action:local: ${values.workflow} has ${jobs.length === 0 ? "no job" : `the jobs ${jobs.join(", ")}: name one with --job`}\n`);
    return 2;
  }
  const scratch = await mkdtemp(join(tmpdir(), "workspace-gates-action-local-"));
  try {
    const [checkout, workspace, temp] = ["action", "workspace", "runner-temp"].map((folder) => join(scratch, folder)) as [string, string, string];
    for (const folder of [checkout, workspace, temp]) await mkdir(folder);
    await copyTracked(process.cwd(), checkout);
    await copyTracked(resolve(values.repo), workspace);
    const env = Object.fromEntries(Object.entries(process.env).filter(([variable]) => !variable.startsWith("npm_")));
    // Any owner's fork at any ref: `uses: OWNER/workspace-gates@v0.1.0` names this checkout.
    const job = await new Runner(checkout, /^[\w.-]+\/workspace-gates@/, workspace, temp, env).runJob(steps);
    process.stdout.write(job.log);
    for (const used of job.used) process.stdout.write(`not run here: ${used.uses}${Object.keys(used.with).length === 0 ? "" : ` with ${JSON.stringify(used.with)}`}\n`);
    for (const [step, outputs] of Object.entries(job.actionOutputs)) process.stdout.write(`outputs of ${step}: ${JSON.stringify(outputs)}\n`);
    process.stdout.write(job.failed === undefined ? `job ${name}: succeeded\n` : `job ${name}: failed at "${job.failed.step}" (exit ${job.failed.code})\n`);
    return job.failed?.code ?? 0;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

process.exitCode = await main();
