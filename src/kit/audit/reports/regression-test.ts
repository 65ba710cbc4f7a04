/**
 * `audit --regression-test DIR`: for a failure, a small test file the user keeps (node:test), which
 * lays out the counterexample's workspace with `workspace-gates/arbitraries` and makes its calls
 * against the module, so the bug stays fixed without running the audit again.
 *
 * Promises: one file per failure it can write, `DIR/<property>.test.mjs`, written from the JSON
 * model (the `case` every report renders): the sandbox made with `createSandbox` under the case's
 * root name, the tree laid out with `materialize` and the files it writes written, the tools made as
 * the case made them, and each call, as printed, in order. It asserts the rule the failure broke, as
 * seen on the sandbox or in the answers: no answer and no file inside holds an outside canary's
 * secret, nor does the call the rule broke at once the outside changed (`outside read`); nothing outside changed (`outside changed`); the call the rule broke at
 * answers the same once only the outside changed, when it answers as before once the outside is put
 * back (`outside revealed`); no call makes a file's content vanish (`inside destroyed`); a path with
 * a NUL byte is refused (`fields.nulBytes`). So it fails while the bug is there and passes once it is
 * fixed. `regressionTestOf` says why it writes none for a failure that is no list of tool calls on a
 * module, that sets up what a file cannot lay out (a fault, a raw-byte name, a swap), or whose
 * consequence only its property's own oracle judges.
 * Does not promise: that the test fails for the same reason on another machine's kernel, nor anything
 * of the audit's other cases: it is one counterexample.
 */
import { writeFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { Counterexample } from "../runner/counterexample.js";
import type { JsonReport, JsonResult } from "./report.js";
import { VERSION } from "../../version.js";
import { entryLine } from "../../sandbox/tree.js";

/** What a regression test asserts, by the consequence of the failure (or, for `fields.nulBytes`, its rule). */
type Rule = "outside read" | "outside changed" | "outside revealed" | "inside destroyed" | "refused";

/** The file name of a failure's regression test. */
export const regressionTestFile = (id: string): string => `${id}.test.mjs`;

/** The test file for `result`, with the module imported from `dir`; or why none is written. */
export function regressionTestOf(result: JsonResult, module: string | undefined, dir: string, target: string): { text: string } | { why: string } {
  const example = result.case;
  if (module === undefined) return { why: "the target is no module: a regression test calls a module's exports" };
  if (example === undefined || example.calls.length === 0) return { why: "its counterexample is no list of calls" };
  if (example.setup !== undefined) return { why: `its case sets up what a test file cannot lay out (${example.setup[0]})` };
  if ((example.tools?.length ?? 0) > 1) return { why: "its case makes the tools more than one way" };
  if (result.kind === "limit") return { why: "it is a known limit: the reference fails it too" };
  const rule: Rule | undefined = result.id === "fields.nulBytes" ? "refused" : ruleOf(result.consequence);
  if (rule === undefined) return { why: `its consequence, ${result.consequence ?? "none"}, is judged by the property's own rule` };
  const from = relative(dir, module).split(sep).join("/");
  return { text: testText(result, example, rule, from.startsWith(".") ? from : `./${from}`, target) };
}

function ruleOf(consequence: JsonResult["consequence"]): Rule | undefined {
  return consequence === "outside read" || consequence === "outside changed" || consequence === "outside revealed" || consequence === "inside destroyed" ? consequence : undefined;
}

function testText(result: JsonResult, example: Counterexample, rule: Rule, module: string, target: string): string {
  const { workspace } = example;
  const broke = example.broke ?? example.calls.length;
  const names = [...new Set(example.calls.map((call) => call.subject))].filter((name) => /^[A-Za-z_$][\w$]*$/.test(name) && example.calls.some((call) => call.call.startsWith(`${name}.execute(`)));
  const exports = ["createWorkspaceTools", "workspacePath", "isInside"].filter((name) => [...(example.tools ?? []), ...example.calls.map((call) => call.call)].some((call) => call.startsWith(`${name}(`)));
  const body = [
    `const box = await createSandbox("workspace-gates-regression-", { rootName: ${JSON.stringify(workspace?.name ?? "ws")} });`,
    "try {",
    "  const $BOX = dirname(box.outside);",
    ...(workspace === undefined || workspace.tree.length === 0
      ? []
      : ["  await materialize([", ...workspace.tree.map((shown) => `    ${JSON.stringify(shown.entry)}, // ${entryLine(shown)}`), "  ], box);"]),
    ...(workspace?.written ?? []).map(({ path: file, content }) => `  await writeFile(join(box.root, ${JSON.stringify(file)}), ${JSON.stringify(content)});`),
    ...(example.tools ?? []).map((made) => `  const tools = ${made};`),
    ...(names.length === 0 ? [] : ["  const tool = (name) => tools.find((candidate) => candidate.spec.name === name);", ...names.map((name) => `  const ${name} = tool(${JSON.stringify(name)});`)]),
    "  const answers = [];",
    ...example.calls.flatMap((call, index) => [
      ...(rule === "inside destroyed" ? [`  const before${index + 1} = await filesInside(box.root);`] : []),
      `  answers.push(await ${call.call});${index + 1 === broke ? " // the call the rule broke at" : ""}`,
      ...(rule === "inside destroyed"
        ? [`  const after${index + 1} = [...(await filesInside(box.root)).values()];`, `  for (const [file, content] of before${index + 1}) assert.ok(after${index + 1}.includes(content), \`call ${index + 1} destroyed what \${file} held\`);`]
        : []),
    ]),
    ...assertions(rule, example.calls[broke - 1]?.call ?? "undefined", broke),
    "} finally {",
    "  await box.dispose();",
    "}",
  ];
  const helpers = body.some((line) => line.includes("filesInside(")) ? [FILES_INSIDE] : [];
  const uses = (word: string) => [...body, ...helpers].some((line) => line.includes(word));
  return [
    `// A regression test of ${result.id} against ${target}, written by workspace-gates ${VERSION}`,
    "// (audit --regression-test): the counterexample of its failure, laid out and called again. It fails while",
    "// the bug is there and passes once it is fixed. Run it with `node --test` (a .ts module: `node --import tsx --test`).",
    `// rule: ${result.title}`,
    ...(result.reason ?? "").split("\n").map((line, index) => `// ${index === 0 ? "broken: " : "  "}${line}`),
    ...(result.replay === undefined ? [] : [`// replay the audit's case: ${result.replay}`]),
    'import assert from "node:assert/strict";',
    'import { test } from "node:test";',
    ...(uses("writeFile(") || uses("filesInside(") ? [`import { ${[...(uses("filesInside(") ? ["lstat", "readFile", "readdir"] : []), ...(uses("writeFile(") ? ["writeFile"] : [])].join(", ")} } from "node:fs/promises";`] : []),
    `import ${uses("path.") ? "path, " : ""}{ dirname${uses("join(") ? ", join" : ""} } from "node:path";`,
    `import { ${["createSandbox", ...(uses("materialize(") ? ["materialize"] : []), ...(uses("SECRET") ? ["SECRET"] : [])].join(", ")} } from "workspace-gates/arbitraries";`,
    `import { ${exports.join(", ")} } from ${JSON.stringify(module)};`,
    ...helpers.flatMap((helper) => ["", helper]),
    "",
    `test(${JSON.stringify(`${result.id}: ${result.title}`)}, async () => {`,
    ...body.map((line) => `  ${line}`),
    "});",
    "",
  ].join("\n");
}

function assertions(rule: Rule, brokeCall: string, broke: number): string[] {
  switch (rule) {
    case "outside read":
      return [
        "  for (const [index, answer] of answers.entries()) assert.ok(!JSON.stringify(answer).includes(SECRET), `call ${index + 1} returned content from outside: ${JSON.stringify(answer).slice(0, 200)}`);",
        '  for (const [file, content] of await filesInside(box.root)) assert.ok(!content.includes(SECRET), `${file}, inside the workspace, holds content from outside`);',
        "  // Asked again once the outside changed: a name that holds nothing yet may hold a secret then.",
        "  const restore = await box.perturbOutside();",
        "  try {",
        `    const again = await ${brokeCall};`,
        `    assert.ok(!JSON.stringify(again).includes(SECRET), \`call ${broke} returned content from outside once the outside had changed: \${JSON.stringify(again).slice(0, 200)}\`);`,
        "  } finally {",
        "    await restore();",
        "  }",
      ];
    case "outside changed":
      return ['  assert.deepEqual(await box.canaryChanges(), [], "something outside the workspace changed");'];
    case "outside revealed":
      return [
        "  // Asked again once only the outside changed, and once it is put back: an answer that moved on its own decides nothing.",
        "  const restore = await box.perturbOutside();",
        "  let perturbed;",
        "  try {",
        `    perturbed = await ${brokeCall};`,
        "  } finally {",
        "    await restore();",
        "  }",
        `  const restored = await ${brokeCall};`,
        `  if (JSON.stringify(restored) === JSON.stringify(answers[${broke - 1}])) assert.deepEqual(perturbed, answers[${broke - 1}], "call ${broke} answered otherwise once only the outside had changed");`,
      ];
    case "inside destroyed":
      return [];
    case "refused":
      return ["  for (const [index, answer] of answers.entries()) assert.equal(answer.isError, true, `call ${index + 1} took a path with a NUL byte: ${JSON.stringify(answer)}`);"];
  }
}

/** The helper a test that looks inside the workspace carries. */
const FILES_INSIDE = `/** Every regular file inside \`dir\`, links not followed, and its content. */
async function filesInside(dir, prefix = "") {
  const files = new Map();
  for (const name of await readdir(dir)) {
    const at = join(dir, name);
    const stats = await lstat(at);
    if (stats.isDirectory()) for (const [inner, content] of await filesInside(at, \`\${prefix}\${name}/\`)) files.set(inner, content);
    else if (stats.isFile()) files.set(\`\${prefix}\${name}\`, await readFile(at, "utf8"));
  }
  return files;
}`;

/** Writes the regression test of every failure of `report` into `dir`; answers what it wrote and what it did not, a line each, for the text report. */
export async function writeRegressionTests(report: JsonReport, dir: string): Promise<string> {
  const lines: string[] = [];
  for (const result of report.results.filter((candidate) => candidate.status === "failed")) {
    const test = regressionTestOf(result, report.module, dir, report.target);
    if ("why" in test) {
      lines.push(`  no regression test for ${result.id}: ${test.why}`);
      continue;
    }
    const file = join(dir, regressionTestFile(result.id));
    await writeFile(file, test.text);
    lines.push(`  ${file}`);
  }
  return lines.length === 0 ? "" : `regression tests (node --test; a .ts module: node --import tsx --test):\n${lines.join("\n")}\n`;
}
