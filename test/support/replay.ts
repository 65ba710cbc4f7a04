// Counterexamples made again as a reader would: the printed calls, against a module, in a sandbox laid
// out as the JSON's case says (test/counterexamples.test.ts, test/pinned-call.test.ts).
import { lstat, readFile, readdir, realpath, writeFile } from "node:fs/promises";
import * as nodePath from "node:path";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { JsonResult } from "../../src/kit/audit/reports/report.js";
import { type Sandbox, createSandbox } from "../../src/kit/sandbox/sandbox.js";
import { materialize } from "../../src/kit/sandbox/tree.js";

/** A counterexample as printed: its tools line, its setup lines, its calls, and the call it broke at. */
export interface Printed {
  tools?: string;
  setup: string[];
  calls: string[];
  broke?: number;
}

/** What the setup lines of a counterexample ask for, done with the tools made when it says (`makeTools`). */
export type Prepare = (box: Sandbox, setup: readonly string[], makeTools: () => void) => Promise<void>;

/** A call made again: what it answered, or how it failed. */
export type Answer = { ok: true; value: unknown } | { ok: false; error: unknown };

export interface Replayed {
  answers: Answer[];
  /** What changed outside the workspace, as the sandbox lists it. */
  changes: string[];
  /** Each file inside the workspace and its content, before each call and after the last. */
  contents: Map<string, string>[];
  /** The same calls asked again of the broken one once the outside has changed (for a rule on what an answer reveals). */
  perturbed?: Answer;
  /** Each call's injected fault, where the setup injects one. */
  faults: InjectedFault[];
}

/** A fault a setup line injects: the `fsApi` to pass, the code it throws, and whether a lookup met it. */
export interface InjectedFault {
  fsApi: unknown;
  code: string;
  fired: boolean;
}

/** `fsApi of call N: node:fs/promises, but its Kth lstat fails with CODE`, as a fault the test builds itself. */
function faultyFsApis(setup: readonly string[]): InjectedFault[] {
  return setup.flatMap((line) => {
    const fault = /^fsApi of call \d+: node:fs\/promises, but its (\d+)\w\w (lstat|realpath) fails with (\w+)$/.exec(line);
    if (fault === null) return [];
    const [, nth, operation, code = ""] = fault;
    let calls = 0;
    const injected: InjectedFault = { fsApi: undefined, code, fired: false };
    const failing =
      (name: string, real: (path: string) => Promise<unknown>) =>
      async (path: string): Promise<unknown> => {
        if (name === operation && ++calls === Number(nth)) {
          injected.fired = true;
          throw Object.assign(new Error(`${code}: injected, ${name} '${path}'`), { code });
        }
        return real(path);
      };
    injected.fsApi = { lstat: failing("lstat", lstat), realpath: failing("realpath", realpath) };
    return [injected];
  });
}

/** The counterexample as printed under the property's row of the text report: its tools line, its setup lines, its calls. */
export function printed(stdout: string, id: string): Printed {
  const block = new RegExp(`^[^\\n]*\\s${id.replaceAll(".", "\\.")}\\s+(?:FAILED|known limit|differs)\\s[^]*?\\n {4}counterexample:\\n([^]*?)\\n {4}(?:replay|shrinking)`, "m").exec(stdout)?.[1];
  if (block === undefined) throw new Error(`no counterexample of ${id} in:\n${stdout}`);
  const lines = block.split("\n").map((line) => line.slice(6));
  const start = lines.findIndex((line) => /^(calls, in order|call)/.test(line));
  const setupFrom = lines.findIndex((line, index) => index > 0 && !line.startsWith("  ") && !/^(workspace|tree|tools):/.test(line));
  return {
    ...(lines.find((line) => line.startsWith("tools: ")) === undefined ? {} : { tools: lines.find((line) => line.startsWith("tools: "))?.slice("tools: ".length) as string }),
    setup: setupFrom < 0 || setupFrom >= start ? [] : lines.slice(setupFrom, start),
    calls: lines.slice(start + 1).map((line) => /^ {2}\d+\. (.*)$/.exec(line)?.[1] as string),
    ...(/broke at call (\d+)/.exec(lines[start] ?? "") === null ? {} : { broke: Number(/broke at call (\d+)/.exec(lines[start] ?? "")?.[1]) }),
  };
}

/** Every file inside `dir` and its content, links not followed. */
async function filesIn(dir: string, prefix = ""): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    const stats = await lstat(path);
    if (stats.isDirectory()) for (const [inner, content] of await filesIn(path, `${prefix}${name}/`)) found.set(inner, content);
    else if (stats.isFile()) found.set(`${prefix}${name}`, await readFile(path, "utf8"));
  }
  return found;
}

/** Makes the printed calls again against `module`, in a sandbox laid out as the JSON's case says. */
export async function replay(module: string, result: JsonResult, shown: Printed, prepare: Prepare | undefined, parent: string): Promise<Replayed> {
  const workspace = result.case?.workspace;
  const box = await createSandbox("workspace-gates-replay-test-", { rootName: workspace?.name ?? "ws", parent });
  try {
    if (workspace !== undefined) {
      await materialize(workspace.tree.map((shownEntry) => shownEntry.entry), box);
      for (const { path, content } of workspace.written ?? []) await writeFile(join(box.root, path), content);
    }
    const exports = (await import(pathToFileURL(resolve(module)).href)) as Record<string, unknown>;
    const scope: Record<string, unknown> = { $BOX: dirname(box.outside), path: nodePath, ...exports };
    scope.tool = (name: string) => scope[name];
    const evaluate = (expression: string): unknown => new Function("scope", `with (scope) { return (${expression}); }`)(scope);
    const makeTools = () => {
      for (const tool of evaluate(shown.tools as string) as { spec: { name: string } }[]) scope[tool.spec.name] = tool;
    };
    const faults = faultyFsApis(shown.setup);
    scope.fsApi = faults[0]?.fsApi;
    if (prepare !== undefined) await prepare(box, shown.setup, makeTools);
    else if (shown.tools !== undefined) makeTools();
    const answers: Answer[] = [];
    const contents: Map<string, string>[] = [];
    const settle = async (expression: string): Promise<Answer> => {
      try {
        return { ok: true, value: await evaluate(expression) };
      } catch (error) {
        return { ok: false, error };
      }
    };
    for (const [index, call] of shown.calls.entries()) {
      scope.fsApi = faults[index]?.fsApi;
      if (faults.length > 0 && shown.tools !== undefined) makeTools();
      contents.push(await filesIn(box.root));
      answers.push(await settle(call));
    }
    contents.push(await filesIn(box.root));
    const changes = await box.canaryChanges();
    let perturbed: Answer | undefined;
    if (changes.length === 0) {
      const restore = await box.perturbOutside();
      perturbed = await settle(shown.calls[(shown.broke ?? shown.calls.length) - 1] as string);
      await restore();
    }
    return { answers, changes, contents, faults, ...(perturbed === undefined ? {} : { perturbed }) };
  } finally {
    await box.dispose();
  }
}
