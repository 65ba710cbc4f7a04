/**
 * Gate 2 seen from outside: every tool answers any JSON value, and answers it the chapter's way.
 *
 * - `fields.tools`: for any input, `execute` resolves; when a required field is not a string (or the
 *   input is not a plain object) the answer is exactly the chapter's `invalid <tool> input` error, and
 *   otherwise it is not. Path and command strings are replaced by harmless ones before the call: this
 *   property is about shapes, and a generated string must never become a shell command.
 * - `fields.rootFromInput`: extra fields that name another root or working directory (`root`, `cwd`,
 *   …) pointing outside are ignored: the root comes from construction, never from tool input.
 * - `fields.nulBytes`: a path with a NUL byte is refused by read and write, never cut or cleaned
 *   into another path (no OS path can hold NUL, so such input is malformed, not a file name).
 */
import fc from "fast-check";
import { type AuditProperty, execute, inSandbox, toolsOf, violation } from "../property.js";
import { SECRET } from "../../sandbox/sandbox.js";
import { type Area, areaPath } from "../../sandbox/tree.js";
import { neighbourArea, nulCandidate, toolInput } from "../arbitraries/index.js";

const INVALID: Record<ToolName, string> = {
  read: "invalid read input: path must be a string",
  write: "invalid write input: path and content must be strings",
  bash: "invalid bash input: command must be a string",
};

const REQUIRED: Record<ToolName, readonly string[]> = { read: ["path"], write: ["path", "content"], bash: ["command"] };

type ToolName = "read" | "write" | "bash";

const toolName = fc.constantFrom<ToolName>("read", "write", "bash");

/** The harmless string each required field holds when the generated input gives it one. */
const PROBES: Record<ToolName, Record<string, string>> = {
  read: { path: "field-gate-probe.txt" },
  write: { path: "field-gate-probe.txt", content: "field gate probe" },
  bash: { command: "true" },
};

/** Beside the classes of tool-input.ts: any value, or an object whose known fields hold any value, in the shapes JSON and JS can produce. */
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
  if (typeof copy.path === "string") copy.path = "field-gate-probe.txt";
  if (typeof copy.command === "string") copy.command = "true";
  return copy;
}

export const fieldsTools: AuditProperty<{ tool: ToolName; inputs: unknown[] }> = {
  id: "fields.tools",
  gate: "stringField",
  kind: "guarantee",
  title: "any input is answered, with the chapter's message exactly when a field is not a string",
  needs: ["createWorkspaceTools"],
  // Several inputs per case, against one tool set: a call costs far less than a sandbox.
  arbitrary: toolName.chain((tool) =>
    fc
      .array(fc.oneof({ weight: 4, arbitrary: toolInput({ fields: PROBES[tool] }).map(({ input }) => input) }, { weight: 1, arbitrary: anyInput.map(defuse) }), {
        minLength: 1,
        maxLength: 8,
      })
      .map((inputs) => ({ tool, inputs })),
  ),
  render: ({ tool, inputs }) => inputs.map((input) => `${tool}.execute(${fc.stringify(input)})`).join("\n"),
  async check(target, { tool, inputs }) {
    await inSandbox(async (box) => {
      const tools = toolsOf(target, box.root);
      for (const input of inputs) {
        const result = await execute(tools[tool], input);
        const valid = isPlainRecord(input) && REQUIRED[tool].every((field) => typeof input[field] === "string");
        if (!valid && (result.content !== INVALID[tool] || result.isError !== true))
          violation(`${tool}.execute(${fc.stringify(input)}): expected { content: ${JSON.stringify(INVALID[tool])}, isError: true }, got ${JSON.stringify(result)}`);
        if (valid && result.content === INVALID[tool]) violation(`${tool}.execute(${fc.stringify(input)}): refused valid input as invalid`);
      }
    });
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
  arbitrary: fc.record({
    tool: toolName,
    fields: fc.subarray([...ROOT_FIELDS], { minLength: 1 }),
    area: neighbourArea(),
  }),
  render: ({ tool, fields, area: where }) => `${tool} with ${fields.map((field) => `${field}: $${where}`).join(", ")}`,
  async check(target, { tool, fields, area: where }) {
    await inSandbox(async (box) => {
      const elsewhere = areaPath(box, where);
      const extra = Object.fromEntries(fields.map((field) => [field, elsewhere]));
      const tools = toolsOf(target, box.root);
      const input = { read: { path: "secret.txt" }, write: { path: "secret.txt", content: "from the input root" }, bash: { command: "pwd -P" } }[tool];
      const result = await execute(tools[tool], { ...input, ...extra });
      if (String(result.content).includes(SECRET)) violation(`read the canary through an input root: ${String(result.content)}`);
      if (tool === "bash" && result.isError !== true && result.content !== `${box.root}\n`)
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
  arbitrary: fc.record({ tool: fc.constantFrom("read" as const, "write" as const), path: nulCandidate() }),
  render: ({ tool, path }) => `${tool} ${JSON.stringify(path)}`,
  async check(target, { tool, path }) {
    await inSandbox(async (box) => {
      const tools = toolsOf(target, box.root);
      const result = await execute(tools[tool], tool === "read" ? { path } : { path, content: "after a NUL" });
      if (result.isError !== true) violation(`${tool} accepted a path with a NUL byte: ${JSON.stringify(result)}`);
    });
  },
};
