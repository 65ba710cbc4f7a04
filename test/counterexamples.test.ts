// A counterexample reproduces as printed (issue 45): for every property whose counterexample is a list
// of calls, the calls copied from the text report of a real audit run against a fork that fails it,
// made again against the fork's module in a sandbox laid out as the report says, break the rule again,
// and made against the reference do not. Also: one name for each place, in every report alike, and
// words a reader knows.
import fc from "fast-check";
import { execFileSync } from "node:child_process";
import { readFile, symlink, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { PROPERTIES } from "../src/kit/audit/properties/index.js";
import { PROTECTED_PROPERTIES } from "../src/kit/audit/properties/protected.js";
import type { JsonReport, JsonResult } from "../src/kit/audit/reports/report.js";
import { SECRET } from "../src/kit/sandbox/sandbox.js";
import { namedTwins } from "../src/kit/sandbox/root-twins.js";
import { type TarEntry, tarBytes } from "../src/kit/sandbox/tar.js";
import { entriesIn, entryOfText } from "../src/kit/audit/arbitraries/archives.js";
import { cli, useScratch } from "./support/cli.js";
import { type Answer, type Prepare, type Replayed, printed, replay } from "./support/replay.js";
import { parseJUnit } from "./support/ci-reports.js";

const scratch = useScratch("workspace-gates-counterexamples-test-");

/** The reference, against which no printed call breaks a rule; the secure surface for the further tools it lacks. */
const REFERENCE = "src/index.ts";
const SECURE_SURFACE = "fixtures/surface/surface.ts";
/** What closes the reference's known limits: the verified tools (Linux). */
const VERIFIED = `export { createVerifiedWorkspaceTools as createWorkspaceTools } from ${JSON.stringify(resolve("src/verified/verified-tools.ts"))};\n`;

/**
 * A surface of further tools whose only check is lexical (the resolved path must start with the
 * root): every operation follows the links a tree plants, which is the one mistake. Relative and
 * absolute candidates outside the root are refused, so nothing it does leaves the sandbox.
 */
const LEXICAL_SURFACE = `
import { copyFile, mkdir, readFile, readdir, rm, stat } from "node:fs/promises";
import { resolve, sep } from "node:path";
const tool = (name, fields, run) => ({
  spec: { name, description: name, inputSchema: { type: "object", properties: Object.fromEntries(fields.map((field) => [field, { type: "string" }])), required: fields } },
  async execute(input) {
    try {
      if (fields.some((field) => typeof input?.[field] !== "string")) throw new Error("invalid input");
      return { content: await run(input) };
    } catch (error) {
      return { content: String(error?.message ?? error), isError: true };
    }
  },
});
export function createWorkspaceTools(root) {
  const base = resolve(root);
  const at = (path) => {
    const full = resolve(base, path);
    if (full !== base && !full.startsWith(base + sep)) throw new Error("path escapes workspace");
    return full;
  };
  return [
    tool("mkdir", ["path"], async ({ path }) => (await mkdir(at(path), { recursive: true }), "made " + path)),
    tool("tree", ["path"], async ({ path }) => (await readdir(at(path), { recursive: true })).sort().join("\\n")),
    tool("grep", ["path", "pattern"], async ({ path, pattern }) => (await readFile(at(path), "utf8")).split("\\n").filter((line) => line.includes(pattern)).join("\\n")),
    tool("stat", ["path"], async ({ path }) => String((await stat(at(path))).size) + " bytes"),
    tool("copy", ["source", "destination"], async ({ source, destination }) => (await copyFile(at(source), at(destination)), "copied")),
    tool("delete", ["path"], async ({ path }) => (await rm(at(path)), "deleted " + path)),
  ];
}
`;


/** How the failure shows again: true when the replay against the module broke the rule. */
type Judge = (fork: Replayed, reference: Replayed, broke: number) => boolean;

const text = (answer: Answer | undefined) => JSON.stringify(answer?.ok ? answer.value : String((answer as { error: unknown } | undefined)?.error));
const leaksSecret: Judge = (fork) => fork.answers.some((answer) => text(answer).includes(SECRET));
const changesOutside: Judge = (fork) => fork.changes.length > 0;
const isNoError = (answer: Answer | undefined) => answer?.ok === true && (answer.value as { isError?: boolean }).isError !== true;
const acceptsInvalid: Judge = (fork, reference, broke) => isNoError(fork.answers[broke - 1]) && !isNoError(reference.answers[broke - 1]);
const differsFromReference: Judge = (fork, reference, broke) => text(fork.answers[broke - 1]).replaceAll(/\/\S*?\/g\/g\/g\/g/g, "$BOX") !== text(reference.answers[broke - 1]).replaceAll(/\/\S*?\/g\/g\/g\/g/g, "$BOX");
const revealsOutside: Judge = (fork, _reference, broke) => text(fork.answers[broke - 1]) !== text(fork.perturbed);
/** The fault properties' rule: a fault a lookup met comes out of the call as that same error code. */
const swallowsFault: Judge = (fork, _reference, broke) => {
  const [fault, answer] = [fork.faults[broke - 1], fork.answers[broke - 1]];
  return fault?.fired === true && (answer?.ok !== false || (answer.error as NodeJS.ErrnoException).code !== fault.code);
};
const destroysInside: Judge = (fork) => {
  const [before, after] = [fork.contents.at(-2) ?? new Map(), fork.contents.at(-1) ?? new Map()];
  return [...before.values()].some((content) => ![...after.values()].includes(content));
};
/** A rule whose breach shows as any of several consequences: the audit reports the gravest one it met. */
const either =
  (...judges: Judge[]): Judge =>
  (fork, reference, broke) =>
    judges.some((judge) => judge(fork, reference, broke));

interface Case {
  id: string;
  module: string;
  judge: Judge;
  /** The module that keeps the rule, asked the same calls (default: the reference). */
  keeper?: string;
  /** What the setup lines of its counterexample ask for, done with the tools made when it says (`makeTools`). */
  prepare?: Prepare;
}


const CASES: Case[] = [
  { id: "fields.tools", module: "fixtures/vulnerable/array-input.ts", judge: acceptsInvalid },
  { id: "fields.rootFromInput", module: "fixtures/vulnerable/root-from-input.ts", judge: leaksSecret },
  { id: "fields.nulBytes", module: "fixtures/vulnerable/nul-after-check.ts", judge: acceptsInvalid },
  { id: "isInside.posix", module: "fixtures/vulnerable/similar-prefix.ts", judge: differsFromReference },
  { id: "isInside.win32", module: "fixtures/vulnerable/similar-prefix.ts", judge: differsFromReference },
  { id: "containment.workspacePath", module: "fixtures/vulnerable/raw-candidate.ts", judge: differsFromReference },
  { id: "precision.workspacePath", module: "fixtures/vulnerable/similar-prefix.ts", judge: differsFromReference },
  { id: "faults.workspacePath", module: "fixtures/vulnerable/fail-open-errors.ts", judge: swallowsFault },
  { id: "faults.tools", module: "fixtures/vulnerable/fail-open-errors.ts", judge: differsFromReference },
  { id: "containment.read", module: "fixtures/vulnerable/similar-prefix.ts", judge: leaksSecret },
  { id: "containment.write", module: "fixtures/vulnerable/similar-prefix.ts", judge: changesOutside },
  { id: "containment.readMany", module: "fixtures/surface/read-many-existence.ts", judge: revealsOutside, keeper: SECURE_SURFACE },
  { id: "containment.edit", module: "fixtures/surface/edit-unchecked-temporary.ts", judge: changesOutside, keeper: SECURE_SURFACE },
  { id: "containment.list", module: "fixtures/surface/ls-stats-through-links.ts", judge: revealsOutside, keeper: SECURE_SURFACE },
  { id: "containment.search", module: "fixtures/surface/find-follows-links.ts", judge: revealsOutside, keeper: SECURE_SURFACE },
  { id: "containment.move", module: "fixtures/surface/move-destination-unchecked.ts", judge: either(changesOutside, destroysInside), keeper: SECURE_SURFACE },
  ...["mkdir", "tree", "grep", "stat", "copy", "delete"].map((operation) => ({
    id: `containment.${operation}`,
    module: "lexical-surface.mjs",
    keeper: SECURE_SURFACE,
    judge: either(changesOutside, leaksSecret, revealsOutside),
  })),
  {
    id: "containment.lossyName",
    module: "fixtures/vulnerable/lossy-name.ts",
    judge: leaksSecret,
    async prepare(box, setup, makeTools) {
      const link = setup.map((line) => / -> (\.\.\/|\$BOX\/)w\\xFFs, a link made from raw bytes$/.exec(line)?.[1]).find((found) => found !== undefined);
      const raw = Buffer.concat([Buffer.from(link === "../" ? "../" : `${dirname(box.outside)}/`), Buffer.from([0x77, 0xff, 0x73])]);
      await symlink(raw, join(box.root, "lnk"));
      makeTools();
    },
  },
  { id: "containment.other", module: "fixtures/shapes/permissions-lexical.ts", judge: changesOutside, keeper: "fixtures/shapes/shapes.ts" },
  {
    id: "containment.extract",
    module: "fixtures/archives/join-unchecked.ts",
    judge: either(changesOutside, leaksSecret),
    keeper: "fixtures/archives/archives.ts",
    // Each archive as its setup lines name it and its entries, $BOX the sandbox's directory.
    async prepare(box, setup, makeTools) {
      const archives: { name: string; entries: TarEntry[] }[] = [];
      for (const line of setup) {
        const named = /^\S+?\/(archive-\d+\.tar) is a tar the audit wrote, holding in order:$/.exec(line)?.[1];
        const entry = entryOfText(line.trim());
        if (named !== undefined) archives.push({ name: named, entries: [] });
        else if (entry !== undefined) archives.at(-1)?.entries.push(entry);
      }
      expect(archives.length).toBeGreaterThan(0);
      for (const { name, entries } of archives) await writeFile(join(box.root, name), tarBytes(entriesIn(entries, dirname(box.outside))));
      makeTools();
    },
  },
  { id: "limits.hardlink", module: "fixtures/vulnerable/similar-prefix.ts", judge: leaksSecret, keeper: "verified.mjs" },
  { id: "sequences.bash", module: "fixtures/vulnerable/bash-outside-root.ts", judge: changesOutside },
  {
    id: "sequences.rootSwap",
    module: "fixtures/vulnerable/root-swapped.ts",
    judge: either(leaksSecret, changesOutside),
    async prepare(box, setup, makeTools) {
      // Shell words as printed, $BOX given as the sandbox's directory.
      const line = (prefix: RegExp) => setup.map((found) => prefix.exec(found)?.[1]).find((found) => found !== undefined) ?? "false";
      const sh = (words: string) => execFileSync("sh", ["-c", words], { env: { ...process.env, BOX: dirname(box.outside) } });
      sh(line(/^(mkdir .*?); the tools are made on /));
      makeTools();
      sh(line(/then, before their first call: (.*)$/));
    },
  },
  { id: "truncation.read", module: "fixtures/vulnerable/silent-truncation.ts", judge: differsFromReference },
  { id: "conformance.fields", module: "fixtures/secure/own-wording.mjs", judge: differsFromReference },
  { id: "conformance.truncation", module: "fixtures/secure/own-wording.mjs", judge: differsFromReference },
  { id: "bashLimits.output", module: "fixtures/vulnerable/bash-no-output-cut.ts", judge: differsFromReference },
];

/**
 * Failures held only by their printed replay line: properties whose counterexample is a text (an
 * agent's turns).
 */
const REPLAYED_ONLY: readonly { id: string; module: string }[] = [
  { id: "agent.protocol", module: "fixtures/vulnerable/normalized-dispatch.ts" },
  { id: "agent.abort", module: "fixtures/vulnerable/runs-after-abort.ts" },
];

/** Properties that print calls but are not made again here, and why. */
const NOT_REPLAYED: Record<string, string> = {
  "bashLimits.timeout": "its one call waits out the 10 s timeout, twice: a case that costs what this file costs in all",
  "sequences.innerSwap": "its swap comes between two of its calls, where a replay of the printed calls in order cannot place it; test/race.test.ts makes the calls and the printed swap by hand",
  "sequences.swapInCall": "its swap is placed inside its call by a trap on the process's file-system calls, which a replay of the printed call cannot set; its printed replay line places it again (test/race.test.ts, a swap during a call as the report prints it)",
  ...Object.fromEntries(
    PROTECTED_PROPERTIES.map((property) => [property.id, "its entries are protected only by what --protect names, which a replay of the printed calls does not carry; test/protected.test.ts replays its forks"]),
  ),
};




/** The audit of a module that fails the properties, its text and its reports, one run per module. */
const audits = new Map<string, { stdout: string; report: JsonReport; junit: string; sarif: string }>();

beforeAll(async () => {
  await writeFile(join(scratch.path, "lexical-surface.mjs"), LEXICAL_SURFACE);
  await writeFile(join(scratch.path, "verified.mjs"), VERIFIED);
  const modules = new Map<string, string[]>();
  for (const { id, module } of [...CASES, ...REPLAYED_ONLY]) modules.set(module, [...(modules.get(module) ?? []), id]);
  for (const [module, ids] of modules) {
    const [json, junit, sarif] = ["json", "xml", "sarif"].map((extension) => join(scratch.path, `${audits.size}.${extension}`)) as [string, string, string];
    const path = module.startsWith("fixtures/") ? module : join(scratch.path, module);
    const { stdout } = await cli(["audit", path, "--only", ids.join(","), "--seed", "1", "--runs", "50", "--json", json, "--junit", junit, "--sarif", sarif]);
    const read = (file: string) => readFile(file, "utf8");
    audits.set(module, { stdout, report: JSON.parse(await read(json)) as JsonReport, junit: await read(junit), sarif: await read(sarif) });
  }
}, 240_000);

describe("a counterexample, copied from the text report", () => {
  it("is printed as calls by every property whose case is calls, each of them replayed here or said why not", () => {
    const printsCalls = PROPERTIES.filter((property) => typeof property.render(fc.sample(property.arbitrary, { numRuns: 1, seed: 1 })[0]) !== "string").map((property) => property.id);
    expect([...CASES.map((replayed) => replayed.id), ...Object.keys(NOT_REPLAYED)].sort()).toEqual(printsCalls.sort());
  });

  it.each(CASES.map((replayed) => [replayed.id, replayed] as const))("%s: breaks the rule again against the fork, and not against the reference", async (id, { module, judge, prepare, keeper = REFERENCE }) => {
    const audit = audits.get(module);
    const result = audit?.report.results.find((candidate) => candidate.id === id);
    expect(result?.status, audit?.stdout).toBe("failed");
    const shown = printed(audit?.stdout ?? "", id);
    expect(shown.calls.length).toBeGreaterThan(0);
    const broke = shown.broke ?? shown.calls.length;
    const at = (file: string) => (file.startsWith("fixtures/") || file.startsWith("src/") ? file : join(scratch.path, file));
    const [fork, reference] = [await replay(at(module), result as JsonResult, shown, prepare, scratch.path), await replay(at(keeper), result as JsonResult, shown, prepare, scratch.path)];
    expect(judge(fork, reference, broke), `${shown.calls.join("\n")}\nfork: ${fork.answers.map(text).join("\n")}\nreference: ${reference.answers.map(text).join("\n")}`).toBe(true);
    // An oracle that calls everything broken proves nothing: the reference, asked the same, keeps the rule.
    if (judge !== differsFromReference && judge !== acceptsInvalid) expect(judge(reference, reference, broke)).toBe(false);
  });
});

describe("the call a reason names", () => {
  // A sequences.bash finding once read "call 2" over a counterexample of one call (issue 49).
  it("is a call the counterexample shows, and so is the call the rule broke at", () => {
    for (const { report } of audits.values())
      for (const result of report.results.filter((failed) => failed.case !== undefined && failed.case.calls.length > 0)) {
        const calls = result.case?.calls.length ?? 0;
        for (const [, named] of (result.reason ?? "").matchAll(/\bcall (\d+)\b/g)) expect(Number(named), `${result.id}: ${result.reason}\n${result.counterexample}`).toBeLessThanOrEqual(calls);
        expect(result.case?.broke ?? 1, result.id).toBeLessThanOrEqual(calls);
      }
  });
});

describe("a printed replay", () => {
  // fc.commands shrinks by which commands its last run executed: its path alone could not be walked
  // again ("Unable to replay, got wrong path"), so sequences.bash and agent.protocol printed replays that crashed.
  it.each([...CASES, ...REPLAYED_ONLY].map(({ id, module }) => [id, module] as const))("%s of %s: fails again with the same counterexample and reason", async (id, module) => {
    const result = audits.get(module)?.report.results.find((candidate) => candidate.id === id);
    expect(result?.status, audits.get(module)?.stdout).toBe("failed");
    const words = result?.replay?.split(" ") ?? [];
    expect(words).toContain("--path");
    const json = join(scratch.path, `replay-${id}.json`);
    const again = await cli([...words.slice(words.indexOf("audit")), "--json", json]);
    const replayed = (JSON.parse(await readFile(json, "utf8")) as JsonReport).results.find((candidate) => candidate.id === id);
    expect(replayed?.status, again.stdout + again.stderr).toBe("failed");
    expect(replayed?.counterexample).toBe(result?.counterexample);
    expect(replayed?.reason).toBe(result?.reason);
  });
});

describe("one name for each place", () => {
  it("names a twin by its own name in the tree, the calls and the reason, and never by a number", () => {
    for (const { stdout, report } of audits.values()) {
      expect(stdout).not.toMatch(/sibling\d|\$sibling|\$outside|\$root/);
      for (const result of report.results.filter((failed) => failed.case?.workspace !== undefined)) {
        const { workspace } = result.case ?? {};
        const twins = namedTwins(workspace?.name ?? "ws");
        for (const entry of workspace?.tree ?? []) if (entry.crosses && entry.reaches !== undefined && entry.reaches !== "outside" && !entry.reaches.startsWith("$BOX") && entry.reaches !== "..") expect(twins).toContain(entry.reaches);
      }
    }
    const read = audits.get("fixtures/vulnerable/similar-prefix.ts")?.report.results.find((result) => result.id === "containment.read");
    // similar-prefix lets ../ws-other through: its reason, its call and its legend say ws-other.
    expect(read?.reason).toContain("$BOX/ws-other");
    expect(read?.counterexample).toMatch(/ws-other/);
  });

  it("is explained by one legend, the same in the text, JSON, JUnit and SARIF", async () => {
    const [json, junit, sarif] = ["legend.json", "legend.xml", "legend.sarif"].map((name) => join(scratch.path, name)) as [string, string, string];
    const { stdout } = await cli(["audit", "fixtures/vulnerable/similar-prefix.ts", "--only", "containment.read,limits.hardlink", "--seed", "1", "--runs", "30", "--json", json, "--junit", junit, "--sarif", sarif]);
    const legend = /\nlegend:\n((?: {2}.*\n)+)/.exec(stdout)?.[1]?.split("\n").filter((line) => line !== "").map((line) => line.slice(2));
    expect(legend?.[0]).toMatch(/^\$BOX: /);
    expect(legend?.join("\n")).toContain("ws-other");
    expect((JSON.parse(await readFile(json, "utf8")) as JsonReport).legend).toEqual(legend);
    const { properties } = parseJUnit(await readFile(junit, "utf8")).suites.testsuite as unknown as { properties: { property: { name: string; value: string }[] } };
    expect(properties.property.find((property) => property.name === "legend")?.value).toBe(legend?.join("\n"));
    const log = JSON.parse(await readFile(sarif, "utf8")) as { runs: [{ properties: { legend: string[] }; tool: { driver: { rules: { help: { text: string } }[] } } }] };
    expect(log.runs[0].properties.legend).toEqual(legend);
    for (const rule of log.runs[0].tool.driver.rules) expect(rule.help.text).toContain(`legend:\n${legend?.join("\n")}`);
  });
});

/** ls through links (as ls-stats-through-links), under a notice of thirty lines: an answer too long to show whole. */
const VERBOSE_LS = `
import { stat } from "node:fs/promises";
import { surfaceTools } from ${JSON.stringify(resolve("fixtures/surface/surface.ts"))};
const NOTICE = Array.from({ length: 30 }, (_, line) => "notice line " + (line + 1)).join("\\n");
export const createWorkspaceTools = (root) =>
  surfaceTools(root, { listEntry: stat }).map((tool) =>
    tool.spec.name !== "ls" ? tool : { spec: tool.spec, execute: async (input, signal) => { const answer = await tool.execute(input, signal); return { ...answer, content: NOTICE + "\\n" + answer.content }; } },
  );
`;

describe("a finding that an answer revealed the outside", () => {
  const answers = /answered otherwise once only the outside had changed, and as before once it was put back:\n {2}as the outside was: {2}(".*")\n {2}once it had changed: (".*")$/;

  it("shows both answers whole when they are short, in every report", async () => {
    const { report, junit, sarif } = audits.get("fixtures/surface/ls-stats-through-links.ts") ?? {};
    const reason = report?.results.find((result) => result.id === "containment.list")?.reason ?? "";
    const [, before, after] = answers.exec(reason) ?? [];
    expect(JSON.parse(before ?? "null")).toMatch(/\d+ B/);
    expect(JSON.parse(after ?? "null")).not.toBe(JSON.parse(before ?? "null"));
    expect(audits.get("fixtures/surface/ls-stats-through-links.ts")?.stdout).toContain(reason.split("\n").join("\n      "));
    expect(parseJUnit(junit ?? "").cases.get("containment.list")?.failure?.message).toBe(reason);
    expect((JSON.parse(sarif ?? "{}") as { runs: [{ results: { message: { text: string } }[] }] }).runs[0].results[0]?.message.text).toContain(`broken: ${reason}\n`);
  });

  it("shows the lines that differ when the answers are long, and how many lines they share", async () => {
    await writeFile(join(scratch.path, "verbose-ls.ts"), VERBOSE_LS);
    const json = join(scratch.path, "verbose.json");
    const { code, stdout } = await cli(["audit", join(scratch.path, "verbose-ls.ts"), "--only", "containment.list", "--seed", "1", "--runs", "50", "--json", json]);
    expect(code, stdout).toBe(1);
    const reason = (JSON.parse(await readFile(json, "utf8")) as JsonReport).results[0]?.reason ?? "";
    const diff = /the lines that differ \(- as the outside was, \+ once it had changed; (\d+) lines the same\):\n((?: {2}[-+] ".*"\n?)+)$/.exec(reason);
    expect(diff, reason).not.toBeNull();
    // The notice is the same in both: it is counted, never shown; each changed line is shown once on each side.
    expect(Number(diff?.[1])).toBeGreaterThanOrEqual(30);
    expect(diff?.[2]).not.toContain("notice line");
    const lines = (diff?.[2] ?? "").trimEnd().split("\n");
    expect(lines.filter((line) => line.startsWith("  - ")).length).toBe(lines.filter((line) => line.startsWith("  + ")).length);
    expect(stdout).toContain(reason.split("\n").join("\n      "));
  });
});

/**
 * The reference's tools, but a read of a path too long for the kernel falls back to a file beside the
 * workspace: a failure only a long path shows.
 */
const LONG_PATH_FALLBACK = `
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createWorkspaceTools as reference } from ${JSON.stringify(resolve("src/index.ts"))};
export const createWorkspaceTools = (root) =>
  reference(root).map((tool) =>
    tool.spec.name !== "read" ? tool : { spec: tool.spec, execute: async (input, signal) => (String(input?.path).length > 1000 ? { content: readFileSync(join(dirname(root), "outside", "secret.txt"), "utf8") } : tool.execute(input, signal)) },
  );
`;

describe("a long value", () => {
  it("is folded in the text, exact in the JSON and in the replay, and the calls are counted from 1 as the reason counts them", async () => {
    await writeFile(join(scratch.path, "long-path.ts"), LONG_PATH_FALLBACK);
    const json = join(scratch.path, "long.json");
    const { code, stdout } = await cli(["audit", join(scratch.path, "long-path.ts"), "--only", "containment.read", "--seed", "1", "--runs", "50", "--json", json]);
    expect(code, stdout).toBe(1);
    const result = (JSON.parse(await readFile(json, "utf8")) as JsonReport).results[0] as JsonResult;
    const broke = result.case?.broke as number;
    const call = result.case?.calls[broke - 1]?.call ?? "";
    // Shrunk to a path of some four thousand characters, written as the piece it repeats.
    expect(call).toMatch(/^read\.execute\(\{"path":("[^"]*" \+ )?"[^"]{1,8}"\.repeat\(\d+\)( \+ "[^"]*")?\}\)$/);
    const path = (new Function(`return (${call.slice("read.execute(".length, -1)}).path;`) as () => string)();
    expect(path.length).toBeGreaterThan(1000);
    expect(stdout).toContain(`\n        ${broke}. ${call}\n`);
    expect(result.reason).toMatch(new RegExp(`^read \\(call ${broke}\\) returned content from outside`));
    // The replay does the same case: the same counterexample, folded the same way.
    const replay = result.replay?.split(" ") ?? [];
    const again = await cli(replay.slice(replay.indexOf("audit")));
    expect(again.stdout).toContain((result.counterexample ?? "").split("\n").join("\n      "));
  });

  it("of a file's content is folded in the text and exact in the JSON", () => {
    const truncation = audits.get("fixtures/vulnerable/silent-truncation.ts");
    const content = truncation?.report.results.find((result) => result.id === "truncation.read")?.case?.workspace?.written?.[0]?.content ?? "";
    expect(content.length).toBeGreaterThan(16_000);
    const folded = /^ {8}ws\/file\.txt holds (.*)$/m.exec(truncation?.stdout ?? "")?.[1] ?? "";
    expect(folded.length).toBeLessThan(100);
    expect((new Function(`return (${folded});`) as () => string)()).toBe(content);
  });
});

describe("words a reader knows", () => {
  it("never says the chapter, the model resolver or plays, and defines the reference where it speaks of it", () => {
    for (const { stdout } of audits.values()) {
      expect(stdout).not.toMatch(/\bchapter\b|model resolver|\bplays\b/);
      if (/\bthe reference\b/.test(stdout.split("\nlegend:\n")[0] ?? "")) expect(stdout).toMatch(/\n {2}the reference: workspace-gates' own tools/);
    }
  });
});
