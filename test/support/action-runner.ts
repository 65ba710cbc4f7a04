/**
 * A GitHub runner, as far as the README's workflows and action.yml need one: steps run in order until
 * one fails; a `run:` step is written to a file and started as a runner starts `shell: bash`
 * (`bash --noprofile --norc -eo pipefail FILE`) in the workspace, with the step's `env:`, and
 * `GITHUB_OUTPUT`/`GITHUB_ENV` files read back after it; `${{ … }}` in `env:`, `with:` and output
 * values, and `if:` conditions, are evaluated over the contexts a composite action has (`inputs`,
 * `steps.<id>.outputs`, `github.action_path`, `github.workspace`, `runner.temp`). A `uses:` of this
 * repository's action runs action.yml's steps with the inputs its defaults and `with:` give; a `uses:`
 * of another action is recorded with its evaluated `with:` (checkout and setup-node: the test has made
 * the workspace and runs on Node already; upload-sarif: the test reads what it would upload).
 *
 * Promises: an expression or a step of a kind it does not know is an error, never a guess, so a
 * workflow it passes is one whose every expression it evaluated as GitHub documents them.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "yaml";

export interface Step {
  name?: string;
  id?: string;
  if?: string;
  uses?: string;
  with?: Record<string, unknown>;
  run?: string;
  shell?: string;
  env?: Record<string, unknown>;
}

interface ActionMetadata {
  inputs: Record<string, { default?: string }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
}

/** What a `uses:` of another action was given. */
export interface Used {
  uses: string;
  with: Record<string, string>;
}

export interface JobRun {
  /** The step that failed and its exit code, when one did: the job fails there. */
  failed?: { step: string; code: number };
  /** Everything the steps printed, in order. */
  log: string;
  used: Used[];
  /** The outputs of this repository's action, by the step's id in the workflow (or its `uses:`). */
  actionOutputs: Record<string, Record<string, string>>;
}

interface Scope {
  inputs: Record<string, string>;
  steps: Record<string, Record<string, string>>;
  actionPath?: string;
}

export class Runner {
  constructor(
    /** The repository checked out at the action's ref: where action.yml is. */
    readonly actionPath: string,
    /** Matches this repository's action in a workflow's `uses:` (`OWNER/workspace-gates@v…`). */
    readonly actionUses: RegExp,
    readonly workspace: string,
    readonly temp: string,
    readonly env: NodeJS.ProcessEnv,
  ) {}

  async runJob(steps: readonly Step[]): Promise<JobRun> {
    const job: JobRun = { log: "", used: [], actionOutputs: {} };
    await this.runSteps(steps, { inputs: {}, steps: {} }, job);
    return job;
  }

  /** Runs only the action's step `id`, as the action would with these inputs and earlier steps' outputs. */
  async runActionStep(id: string, inputs: Record<string, string>, steps: Record<string, Record<string, string>>): Promise<{ outputs: Record<string, string>; job: JobRun }> {
    const action = await this.action();
    const step = action.runs.steps.find((candidate) => candidate.id === id);
    if (step === undefined) throw new Error(`action.yml has no step ${id}`);
    const job: JobRun = { log: "", used: [], actionOutputs: {} };
    const scope: Scope = { inputs: { ...defaults(action), ...inputs }, steps: { ...steps }, actionPath: this.actionPath };
    await this.runSteps([step], scope, job);
    return { outputs: scope.steps[id] ?? {}, job };
  }

  private async action(): Promise<ActionMetadata> {
    return parse(await readFile(join(this.actionPath, "action.yml"), "utf8")) as ActionMetadata;
  }

  /** Runs `steps` in `scope` until one fails; answers whether all succeeded. */
  private async runSteps(steps: readonly Step[], scope: Scope, job: JobRun): Promise<boolean> {
    for (const step of steps) {
      if (step.if !== undefined && !truthy(evaluate(unwrap(step.if), scope, this))) continue;
      const outputs = await this.runStep(step, scope, job);
      if (outputs === undefined) return false;
      if (step.id !== undefined) scope.steps[step.id] = outputs;
    }
    return true;
  }

  /** A step's outputs, or undefined when it failed (recorded in `job`). */
  private async runStep(step: Step, scope: Scope, job: JobRun): Promise<Record<string, string> | undefined> {
    const name = step.name ?? step.uses ?? step.run ?? "a step";
    const given = Object.fromEntries(Object.entries(step.with ?? {}).map(([key, value]) => [key, substitute(String(value), scope, this)]));
    if (step.uses !== undefined && this.actionUses.test(step.uses)) {
      const action = await this.action();
      if (action.runs.using !== "composite") throw new Error(`action.yml runs ${action.runs.using}, not composite`);
      const unknown = Object.keys(given).filter((key) => !(key in action.inputs));
      if (unknown.length > 0) throw new Error(`${step.uses} has no input ${unknown.join(", ")}`);
      const inner: Scope = { inputs: { ...defaults(action), ...given }, steps: {}, actionPath: this.actionPath };
      const succeeded = await this.runSteps(action.runs.steps, inner, job);
      const outputs = Object.fromEntries(Object.entries(action.outputs).map(([key, output]) => [key, substitute(output.value, inner, this)]));
      job.actionOutputs[step.id ?? step.uses] = outputs;
      return succeeded ? outputs : undefined;
    }
    if (step.uses !== undefined) {
      job.used.push({ uses: step.uses, with: given });
      return {};
    }
    if (step.run === undefined) throw new Error(`${name}: neither run nor uses`);
    if (scope.actionPath !== undefined && step.shell !== "bash") throw new Error(`${name}: a composite action's run step needs shell: bash`);
    const files = await mkdtemp(join(this.temp, "step-"));
    const [script, output, env] = ["script.sh", "output", "env"].map((file) => join(files, file)) as [string, string, string];
    await writeFile(script, step.run);
    await writeFile(output, "");
    await writeFile(env, "");
    const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([key, value]) => [key, substitute(String(value), scope, this)]));
    const { code, stdout, stderr } = await started("bash", ["--noprofile", "--norc", "-eo", "pipefail", script], {
      cwd: this.workspace,
      env: {
        ...this.env,
        CI: "true",
        GITHUB_ACTIONS: "true",
        GITHUB_WORKSPACE: this.workspace,
        RUNNER_TEMP: this.temp,
        GITHUB_OUTPUT: output,
        GITHUB_ENV: env,
        ...(scope.actionPath === undefined ? {} : { GITHUB_ACTION_PATH: scope.actionPath }),
        ...stepEnv,
      },
    });
    job.log += `## ${name}\n${stdout}${stderr}`;
    Object.assign(this.env, commandFile(await readFile(env, "utf8")));
    if (code !== 0) {
      job.failed = { step: name, code };
      return undefined;
    }
    return commandFile(await readFile(output, "utf8"));
  }
}

function defaults(action: ActionMetadata): Record<string, string> {
  return Object.fromEntries(Object.entries(action.inputs).map(([key, input]) => [key, input.default ?? ""]));
}

/** `NAME=value` lines and `NAME<<DELIMITER` blocks, as GITHUB_OUTPUT and GITHUB_ENV hold them. */
export function commandFile(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  const lines = text.split("\n");
  for (let at = 0; at < lines.length; at++) {
    const line = lines[at] as string;
    const block = /^([^=<]+)<<(.+)$/.exec(line);
    if (block !== null) {
      const end = lines.indexOf(block[2] as string, at + 1);
      values[block[1] as string] = lines.slice(at + 1, end).join("\n");
      at = end;
    } else if (line.includes("=")) values[line.slice(0, line.indexOf("="))] = line.slice(line.indexOf("=") + 1);
  }
  return values;
}

const unwrap = (condition: string) => /^\$\{\{(.*)\}\}$/s.exec(condition.trim())?.[1] ?? condition;

/** Every `${{ expression }}` in `text` replaced by its value. */
function substitute(text: string, scope: Scope, runner: Runner): string {
  return text.replace(/\$\{\{(.*?)\}\}/g, (_whole, expression: string) => String(evaluate(expression, scope, runner)));
}

/** `a && b`, `x == 'y'`, `x != 'y'` and context references: what action.yml and the README use. */
export function evaluate(expression: string, scope: Scope, runner: Runner): string | boolean {
  const text = expression.trim();
  if (text.includes("||") || text.includes("(")) throw new Error(`the test's runner does not evaluate ${JSON.stringify(text)}`);
  if (text.includes("&&")) return text.split("&&").every((part) => truthy(evaluate(part, scope, runner)));
  const comparison = /^(.+?)\s*(==|!=)\s*(.+)$/.exec(text);
  if (comparison !== null) {
    const [, left = "", operator, right = ""] = comparison;
    // GitHub compares strings ignoring case.
    const same = String(evaluate(left, scope, runner)).toLowerCase() === String(evaluate(right, scope, runner)).toLowerCase();
    return operator === "==" ? same : !same;
  }
  const literal = /^'(.*)'$/.exec(text);
  if (literal !== null) return (literal[1] as string).replaceAll("''", "'");
  if (text === "github.action_path" && scope.actionPath !== undefined) return scope.actionPath;
  if (text === "github.workspace") return runner.workspace;
  if (text === "runner.temp") return runner.temp;
  const input = /^inputs\.([\w-]+)$/.exec(text);
  if (input !== null && (input[1] as string) in scope.inputs) return scope.inputs[input[1] as string] as string;
  const output = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(text);
  if (output !== null) return scope.steps[output[1] as string]?.[output[2] as string] ?? "";
  throw new Error(`the test's runner does not know ${JSON.stringify(text)}`);
}

const truthy = (value: string | boolean) => value !== false && value !== "";

function started(file: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, [...args], { ...options, maxBuffer: 1 << 26 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}
