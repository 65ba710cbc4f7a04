/**
 * Gate 2 seen from outside: every tool answers any JSON value, refuses what it cannot use, and acts
 * on what it can.
 *
 * - `fields.tools` (guarantee, judged on behaviour): for any input, `execute` resolves; when a required
 *   field is not a string (or the input is not a plain object) the answer is `isError` and nothing was
 *   done with it (no file named after the value was read, nothing in the workspace changed); valid
 *   input is acted on (read returns the file, write writes it, bash runs). Path and command strings are
 *   replaced by harmless ones before the call: this property is about shapes, and a generated string
 *   must never become a shell command.
 *   Refusing valid input (a schema stricter than the chapter's) or answering a valid read in a format
 *   of its own departs from the chapter's convention, a warning unless `--strict`; acting on invalid
 *   input breaks a defence.
 * - `conformance.fields` (conformance): the refusal is exactly the chapter's text
 *   (`INVALID_READ_INPUT`, … in src/gates/messages.ts), and valid input never gets it.
 * - `fields.rootFromInput`: extra fields that name another root or working directory (`root`, `cwd`,
 *   …) pointing outside are ignored: the root comes from construction, never from tool input (bash's
 *   `pwd -P` prints the root on a line of its own, in whatever answer the tool wraps it).
 * - `fields.nulBytes`: a path with a NUL byte is refused by read and write, never cut or cleaned
 *   into another path (no OS path can hold NUL, so such input is malformed, not a file name).
 */
import fc from "fast-check";
import { readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type AuditProperty, Departures, execute, inSandbox, toolsOf, violation } from "../runner/property.js";
import type { Scene } from "../runner/counterexample.js";
import { showValue } from "../runner/show.js";
import type { AuditTarget } from "../../operations/target.js";
import { SECRET, type Sandbox } from "../../sandbox/sandbox.js";
import { type Area, areaPath } from "../../sandbox/tree.js";
import { neighbourArea, nulCandidate, toolInput } from "../arbitraries/index.js";
import { INVALID_BASH_INPUT, INVALID_READ_INPUT, INVALID_WRITE_INPUT } from "../../../gates/messages.js";
import type { ToolResult } from "../../../gates/tool.js";

const INVALID: Record<ToolName, string> = { read: INVALID_READ_INPUT, write: INVALID_WRITE_INPUT, bash: INVALID_BASH_INPUT };

const REQUIRED: Record<ToolName, readonly string[]> = { read: ["path"], write: ["path", "content"], bash: ["command"] };

type ToolName = "read" | "write" | "bash";

const toolName = fc.constantFrom<ToolName>("read", "write", "bash");

/** The file every valid path names, and what it holds before the call. */
const PROBE_FILE = "field-gate-probe.txt";
const PROBE_CONTENT = "PROBE-7c1e: the field gate's probe file";

/** Any value, or an object whose known fields hold any value, in the shapes JSON and JS can produce. */
const anyInput = fc.oneof(
  fc.anything({ withNullPrototype: true, withBoxedValues: true, withObjectString: true }),
  fc.record(
    { path: fc.anything(), content: fc.anything(), command: fc.anything(), extra: fc.anything() },
    { requiredKeys: [] },
  ),
  fc.record({ path: fc.string(), content: fc.string(), command: fc.string() }, { requiredKeys: [] }),
);

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Keeps the shape and replaces the strings the tool would act on by ones that are safe to run. */
function defuse(input: unknown): unknown {
  if (!isPlainRecord(input)) return input;
  const copy: Record<string, unknown> = Object.assign(Object.create(Object.getPrototypeOf(input) as object | null) as object, input);
  if (typeof copy.path === "string") copy.path = PROBE_FILE;
  if (typeof copy.command === "string") copy.command = "true";
  return copy;
}

/**
 * The file a tool that coerces a non-string path (`String(path)`, the "non-string input" mistake) would
 * open: a plain name the sandbox can hold, or undefined.
 */
function coercedName(input: unknown): string | undefined {
  if (!isPlainRecord(input) || input.path === undefined || typeof input.path === "string") return undefined;
  let name: string;
  try {
    name = String(input.path);
  } catch {
    return undefined;
  }
  return /^[^/\0]{1,100}$/.test(name) && name !== "." && name !== ".." ? name : undefined;
}

interface FieldsCase {
  tool: ToolName;
  inputs: unknown[];
}

interface FieldsCall {
  valid: boolean;
  result: ToolResult;
  /** The workspace's names and file contents before the call. */
  before: Map<string, string>;
  after: () => Promise<Map<string, string>>;
}

async function contents(dir: string): Promise<Map<string, string>> {
  const names = (await readdir(dir)).sort();
  return new Map(await Promise.all(names.map(async (name) => [name, await readFile(join(dir, name), "utf8").catch(() => "(not a file)")] as const)));
}

/** Calls `tool` with `input` in a workspace holding the probe file (and the coerced name's twin). */
async function callWithProbes(target: AuditTarget, tool: ToolName, input: unknown, judge: (call: FieldsCall, box: Sandbox) => Promise<void>): Promise<void> {
  await inSandbox(async (box) => {
    const coerced = coercedName(input);
    for (const name of [PROBE_FILE, ...(coerced === undefined ? [] : [coerced])]) await writeFile(join(box.root, name), PROBE_CONTENT);
    const before = await contents(box.root);
    const result = await execute(toolsOf(target, box.root)[tool], input);
    const valid = isPlainRecord(input) && REQUIRED[tool].every((field) => typeof input[field] === "string");
    await judge({ valid, result, before, after: () => contents(box.root) }, box);
  });
}

/** The harmless string each required field holds when a generated input gives it one. */
const PROBES: Record<ToolName, Record<string, string>> = {
  read: { path: PROBE_FILE },
  write: { path: PROBE_FILE, content: "written by the field gate's probe" },
  bash: { command: "true" },
};

// Several inputs per run, each a case in a workspace of its own: one slip of one class per input
// (tool-input.ts) meets a one-line mistake within the default budget; `fc.anything` keeps the breadth.
const fieldsCase: fc.Arbitrary<FieldsCase> = toolName.chain((tool) =>
  fc
    .array(fc.oneof({ weight: 4, arbitrary: toolInput({ fields: PROBES[tool] }).map(({ input }) => input) }, { weight: 1, arbitrary: anyInput.map(defuse) }), {
      minLength: 1,
      maxLength: 8,
    })
    .map((inputs) => ({ tool, inputs })),
);
/** Each input of a run is a case, called in a workspace of its own. */
const inputCount = ({ inputs }: FieldsCase): number => inputs.length;
/** Each call in a workspace of its own, holding the probe file: the calls are what the case made. */
const fieldsScene: Scene = {
  workspace: { name: "ws", spelling: "canonical", tree: [], written: [{ path: PROBE_FILE, content: PROBE_CONTENT }] },
  setup: ["each call in a workspace of its own, as new (and, for a path that is no string, a file named String(path) holding the same)"],
};
/** A case whose one call is in a workspace as new, empty but for what its property says. */
const emptyWorkspace: Scene = { workspace: { name: "ws", spelling: "canonical", tree: [] } };

export const fieldsTools: AuditProperty<FieldsCase> = {
  id: "fields.tools",
  gate: "stringField",
  kind: "guarantee",
  title: "any input is answered; a field that is not a string is refused (isError) and nothing is done with it",
  needs: ["createWorkspaceTools"],
  consequence: "hardening broken",
  threat: () => "the model's input alone",
  weaknesses: ["CWE-20"],
  arbitrary: fieldsCase,
  casesIn: inputCount,
  render: () => fieldsScene,
  async check(target, { tool, inputs }) {
    const departures = new Departures();
    for (const input of inputs) {
      await callWithProbes(target, tool, input, async ({ valid, result, before, after }, box) => {
        if (!valid) {
          if (result.isError !== true) violation(`answered ${showValue(result)} to invalid input instead of refusing it with isError`);
          if (String(result.content).includes(PROBE_CONTENT)) violation(`refused, but read a file named after the value first: ${showValue(result)}`);
          const now = await after();
          if (showValue([...now]) !== showValue([...before])) violation(`refused, but the workspace changed: ${showValue([...before])} became ${showValue([...now])}`);
          return;
        }
        if (result.isError === true) return departures.note(box, `refused valid input: ${showValue(result)}`);
        if (tool === "read" && result.content !== PROBE_CONTENT) departures.note(box, `read of the probe file answered ${showValue(result)}`);
        if (tool === "write" && (await after()).get(PROBE_FILE) !== (input as { content: string }).content)
          violation(`write reported success (${showValue(result)}) but the probe file does not hold the content`);
      });
    }
    departures.settle();
  },
};

export const conformanceFields: AuditProperty<FieldsCase> = {
  id: "conformance.fields",
  gate: "stringField",
  kind: "conformance",
  title: "invalid input is refused with the reference's exact text, and only invalid input",
  needs: ["createWorkspaceTools"],
  consequence: "wording differs",
  threat: () => "the model's input alone",
  arbitrary: fieldsCase,
  casesIn: inputCount,
  render: () => fieldsScene,
  async check(target, { tool, inputs }) {
    const expected = INVALID[tool];
    for (const input of inputs) {
      await callWithProbes(target, tool, input, async ({ valid, result }) => {
        if (!valid && (result.content !== expected || result.isError !== true))
          violation(`${tool}.execute(${showValue(input)}): expected ${showValue({ content: expected, isError: true })}, got ${showValue(result)}`);
        if (valid && result.content === expected) violation(`${tool}.execute(${showValue(input)}): refused valid input with ${showValue(expected)}`);
      });
    }
  },
};

const ROOT_FIELDS = ["root", "cwd", "workspace", "workdir", "workspaceRoot", "dir"] as const;

interface RootFromInputCase {
  tool: ToolName;
  fields: (typeof ROOT_FIELDS)[number][];
  area: Area;
}

export const fieldsRootFromInput: AuditProperty<RootFromInputCase> = {
  id: "fields.rootFromInput",
  gate: "stringField",
  kind: "guarantee",
  title: "a root or working directory named in the input is ignored",
  needs: ["createWorkspaceTools"],
  consequence: "hardening broken",
  threat: () => "the model's input alone",
  arbitrary: fc.record({
    tool: toolName,
    fields: fc.subarray([...ROOT_FIELDS], { minLength: 1 }),
    area: neighbourArea(),
  }),
  render: () => emptyWorkspace,
  async check(target, { tool, fields, area: where }) {
    await inSandbox(async (box) => {
      const elsewhere = areaPath(box, where);
      const extra = Object.fromEntries(fields.map((field) => [field, elsewhere]));
      const tools = toolsOf(target, box.root);
      const input = { read: { path: "secret.txt" }, write: { path: "secret.txt", content: "from the input root" }, bash: { command: "pwd -P" } }[tool];
      const result = await execute(tools[tool], { ...input, ...extra });
      if (String(result.content).includes(SECRET)) violation(`read the canary through an input root: ${String(result.content)}`, "secretInAnswer");
      if (tool === "bash" && result.isError !== true && !String(result.content).split("\n").includes(box.root))
        violation(`bash ran in ${String(result.content).trim()}, not in the workspace root`);
    });
  },
};

interface NulCase {
  tool: "read" | "write";
  path: string;
}

export const fieldsNulBytes: AuditProperty<NulCase> = {
  id: "fields.nulBytes",
  gate: "stringField",
  kind: "guarantee",
  title: "a path with a NUL byte is refused, whatever follows the NUL",
  needs: ["createWorkspaceTools"],
  consequence: "hardening broken",
  threat: () => "the model's input alone",
  weaknesses: ["CWE-158"],
  arbitrary: fc.record({ tool: fc.constantFrom("read" as const, "write" as const), path: nulCandidate() }),
  render: () => emptyWorkspace,
  async check(target, { tool, path }) {
    await inSandbox(async (box) => {
      const tools = toolsOf(target, box.root);
      const result = await execute(tools[tool], tool === "read" ? { path } : { path, content: "after a NUL" });
      if (result.isError !== true) violation(`${tool} accepted a path with a NUL byte: ${JSON.stringify(result)}`);
    });
  },
};
