// `workspace-gates toctou`: the chapter's tools escape when a directory is swapped right after the
// check, the verified tools do not, verdicts rest on evidence, the race adds up, and bad flags are refused.
import { existsSync } from "node:fs";
import * as fsPromises from "node:fs/promises";
import { mkdtemp, readFile, readdir, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LINUX_PROCFS, describeNeeding } from "./support/platform.js";
import { until, useDemoSandbox } from "./support/toctou-demo.js";
import { SECRET, type Sandbox, createSandbox } from "../src/kit/sandbox/sandbox.js";
import { type CliIo, UsageError } from "../src/kit/cli-command.js";
import { isInside } from "../src/gates/is-inside.js";
import { schema } from "../src/gates/schema.js";
import type { Tool, ToolResult } from "../src/gates/tool.js";
import { TEMP_PREFIX, toctouCommand } from "../src/kit/toctou/command.js";
import { type DeterministicReport, runDeterministic } from "../src/kit/toctou/deterministic.js";
import { TOCTOU_USAGE } from "../src/kit/toctou/flags.js";
import { multitoolErrors } from "./support/ci-reports.js";
import { RACE_OPERATIONS, type RaceReport, type Tally, raceOperationTool } from "../src/kit/toctou/race.js";
import { isRefusal } from "../src/kit/toctou/refusal.js";
import { NO_SIDE_EFFECTS } from "../src/kit/toctou/side-effects.js";
import type { ToctouFinding } from "../src/kit/toctou/report.js";
import { type AttackedTools, TOOL_SETS, attackedTools } from "../src/kit/sandbox/tool-sets.js";

const CLAIM_CHANGED =
  "the chapter's tools no longer escape when a directory is swapped for a symlink between check and use. " +
  "docs/toctou.md and SECURITY.md say they do: find out what changed, and update the claim or fix the demo";

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { stdout: (text) => void out.push(text), stderr: (text) => void err.push(text) };
  return { io, stdout: () => out.join(""), stderr: () => err.join("") };
}

let reportDir: string;
beforeEach(async () => {
  reportDir = await mkdtemp(join(tmpdir(), "toctou-test-report-"));
});
afterEach(async () => {
  await rm(reportDir, { recursive: true, force: true });
});

/** The SARIF `--sarif` writes, as far as these tests read it. */
interface ToctouSarif {
  runs: [{ results: { ruleId: string; level: string; message: { text: string }; locations: { physicalLocation: { artifactLocation: { uri: string } } }[]; properties: { consequence: string; threat: string } }[] }];
}

/** Runs the command in-process with `--json` and `--sarif`, and answers its exit code, its output, its report and its SARIF (checked by the Multitool's GitHub rules). */
async function runWithReport<Report extends { workdir: string }>(args: string[]) {
  const json = join(reportDir, "report.json");
  const sarifFile = join(reportDir, "report.sarif");
  const { io, stdout, stderr } = capture();
  const code = await toctouCommand.run([...args, "--json", json, "--sarif", sarifFile], io);
  const report = JSON.parse(await readFile(json, "utf8")) as Report;
  expect(stdout()).toContain(`working in ${report.workdir}`);
  expect(stdout()).toContain(`removed ${report.workdir}`);
  expect(await multitoolErrors([sarifFile])).toEqual([]);
  const sarif = JSON.parse(await readFile(sarifFile, "utf8")) as ToctouSarif;
  return { code, stdout: stdout(), stderr: stderr(), report, sarif };
}

/** Each SARIF result as rule, consequence and threat. */
const findings = (sarif: ToctouSarif) => sarif.runs[0].results.map((result) => [result.ruleId, result.properties.consequence, result.properties.threat]);

describe("toctou --mode deterministic: the limit the chapter admits", () => {
  it("read and write both escape on the first try, each on evidence, and the temp dir is removed", async () => {
    const realRealpath = fsPromises.realpath;
    const { code, stdout, stderr, report, sarif } = await runWithReport<DeterministicReport>(["--mode", "deterministic"]);
    const [read, write] = report.scenarios;

    expect(read?.tool).toBe("read");
    expect(read?.outcome, CLAIM_CHANGED).toBe("escaped");
    expect(read?.check?.path).toBe(join(report.workspace, "docs", "secret.txt"));
    expect(read?.result.content).toContain(SECRET);

    expect(write?.tool).toBe("write");
    expect(write?.outcome, CLAIM_CHANGED).toBe("escaped");
    expect(write?.check?.path).toBe(join(report.workspace, "build"));
    expect(write?.evidence).toBe(`${Buffer.byteLength(write?.input.content ?? "")} bytes landed at outside/dir/report.txt, outside the workspace`);

    // Side effects are counted apart from content: the read left nothing outside, the write its file.
    const landed = { total: 1, directories: 0, emptyFiles: 0, filesWithContent: 1, other: 0 };
    expect(read?.sideEffects).toEqual(NO_SIDE_EFFECTS);
    expect(write?.sideEffects).toEqual({
      ...landed,
      examples: [`added outside/dir/report.txt (file, ${Buffer.byteLength(write?.input.content ?? "")} bytes)`],
    });
    expect(report.contentEscapes).toBe(2);
    expect(report.sideEffects).toMatchObject(landed);
    expect(stdout).toContain("content escapes: 2 of 2 tool calls\nside effects outside the workspace: 1 (1 file with content)\n");
    // Each escape is a SARIF result, and so is the change outside, at package.json when no file is named.
    expect(findings(sarif)).toEqual([
      ["toctou.read", "outside read", "a concurrent process"],
      ["toctou.write", "outside changed", "a concurrent process"],
      ["toctou.outside", "outside changed", "a concurrent process"],
    ]);
    expect(sarif.runs[0].results.every((result) => result.level === "error" && result.locations[0]?.physicalLocation.artifactLocation.uri === "package.json")).toBe(true);
    expect(sarif.runs[0].results[1]?.message.text).toContain(`evidence:\n  ${write?.evidence}`);
    // The text and the JSON state each finding's consequence and threat too, the same ones.
    expect(stdout).toContain(
      [
        "findings:",
        "  toctou.read: read escaped on the first try",
        "    consequence: outside read",
        "    threat: a concurrent process",
        "  toctou.write: write escaped on the first try",
        "    consequence: outside changed",
        "    threat: a concurrent process",
        "  toctou.outside: outside the workspace: 1 (1 file with content)",
        "    consequence: outside changed",
        "    threat: a concurrent process",
      ].join("\n"),
    );
    const stated = (report as DeterministicReport & { findings: ToctouFinding[] }).findings;
    expect(stated.map((finding) => [finding.rule, finding.consequence, finding.threat])).toEqual(findings(sarif));
    expect(stated[0]?.weaknesses).toEqual(["CWE-22", "CWE-200", "CWE-367"]);

    expect(code).toBe(1);
    expect(stderr).toBe("");
    expect(stdout).toMatch(/read "docs\/secret.txt"\n.*setup.*\n.*check passed\n.*swap.*\n.*use.*\n.*result.*\n.*ESCAPED/);
    expect(stdout).toMatch(/write "build\/report.txt"\n.*setup.*\n.*check passed\n.*swap.*\n.*use.*\n.*result.*\n.*ESCAPED/);
    expect(report.workdir.startsWith(join(await realpath(tmpdir()), TEMP_PREFIX))).toBe(true);
    expect(existsSync(report.workdir)).toBe(false);
    // The trap is gone: the tools of every later test see the real realpath again.
    expect(fsPromises.realpath).toBe(realRealpath);
  });
});

describeNeeding(LINUX_PROCFS, "toctou --mode deterministic --tools verified: the same swap against the verified tools", () => {
  it("springs the trap on the chapter's check they run first, and both stay contained with nothing outside", async () => {
    const { code, stdout, stderr, report, sarif } = await runWithReport<DeterministicReport>(["--mode", "deterministic", "--tools", "verified"]);
    const [read, write] = report.scenarios;
    expect(report.tools).toBe("verified");
    // The move was placed exactly where it beats the chapter's tools: after the same check.
    expect(read?.check?.path).toBe(join(report.workspace, "docs", "secret.txt"));
    expect(write?.check?.path).toBe(join(report.workspace, "build"));
    expect(read?.result).toEqual({ content: "read: path escapes workspace", isError: true });
    expect(write?.result).toEqual({ content: "write: path escapes workspace", isError: true });
    expect(report.scenarios.map((scenario) => scenario.outcome)).toEqual(["contained", "contained"]);
    expect(report.scenarios.map((scenario) => scenario.sideEffects)).toEqual([NO_SIDE_EFFECTS, NO_SIDE_EFFECTS]);
    expect(report.contentEscapes).toBe(0);
    expect(report.sideEffects).toEqual(NO_SIDE_EFFECTS);
    expect(findings(sarif)).toEqual([]);
    expect((report as DeterministicReport & { findings: ToctouFinding[] }).findings).toEqual([]);
    expect(code).toBe(0);
    expect(stderr).toBe("");
    expect(stdout).toContain("content escapes: 0 of 2 tool calls\nside effects outside the workspace: none\n");
    expect(stdout).not.toContain("findings:");
    expect(existsSync(report.workdir)).toBe(false);
  });
});

describe("deterministic verdicts rest on evidence, not on the tool set's name", () => {
  const sandbox = useDemoSandbox();
  let box: Sandbox;
  beforeEach(() => {
    box = sandbox.current;
  });

  const tool = (name: string, execute: (input: { path: string; content?: string }) => Promise<ToolResult>): Tool => ({
    spec: { name, description: name, inputSchema: schema(["path"], { path: { type: "string" } }) },
    execute: (input) => execute(input as { path: string; content?: string }),
  });
  const run = (tools: AttackedTools) =>
    runDeterministic({ box, toolsName: "test", tools, narrate: () => {}, signal: new AbortController().signal });

  it("reports contained when a tool checks again after the swap and refuses", async () => {
    // Not a fix (a swap after the second check still wins), but it shows the verdict can say "contained".
    const checkTwice = async (path: string) => {
      const first = await realpath(path);
      const second = await realpath(path);
      return first === second && isInside(box.root, second) ? second : undefined;
    };
    const report = await run({
      read: tool("read", async ({ path }) => {
        const checked = await checkTwice(join(box.root, path));
        return checked === undefined ? { content: "refused", isError: true } : { content: await readFile(checked, "utf8") };
      }),
      write: tool("write", async ({ path }) => {
        const checked = await checkTwice(dirname(join(box.root, path)));
        return checked === undefined ? { content: "refused", isError: true } : { content: "would write" };
      }),
    });
    expect(report.scenarios.map((scenario) => scenario.outcome)).toEqual(["contained", "contained"]);
    expect(report.scenarios.every((scenario) => scenario.check !== null)).toBe(true);
    expect(await box.canaryChanges()).toEqual([]);
  });

  it("gives no verdict when the tools never ask realpath, so the move cannot be placed", async () => {
    const report = await run({
      read: tool("read", async ({ path }) => ({ content: await readFile(join(box.root, path), "utf8") })),
      write: tool("write", async () => ({ content: "wrote nothing" })),
    });
    expect(report.scenarios.map((scenario) => [scenario.outcome, scenario.check])).toEqual([
      ["no-check", null],
      ["no-check", null],
    ]);
  });
});

describe("toctou --mode race: a live racer against the unmodified tools", () => {
  function expectConsistent(tally: Tally) {
    expect(tally.escapes).toBeGreaterThanOrEqual(0);
    expect(tally.escapes).toBeLessThanOrEqual(tally.attempts);
    expect(tally.escapes + tally.succeeded + tally.refused + tally.otherErrors).toBe(tally.attempts);
    expect(tally.escapeRate).toBe(tally.attempts === 0 ? 0 : tally.escapes / tally.attempts);
    expect(tally.firstEscape === null).toBe(tally.escapes === 0);
    expect(tally.evidence.length).toBeLessThanOrEqual(Math.min(3, tally.escapes));
    expect(tally.evidence.length > 0).toBe(tally.escapes > 0);
    if (tally.firstEscape !== null) {
      expect(tally.firstEscape.attempt).toBeGreaterThanOrEqual(1);
      expect(tally.firstEscape.attempt).toBeLessThanOrEqual(tally.attempts);
    }
  }

  it("reports self-consistent figures on a 1 s budget, whether or not it wins", async () => {
    const { code, stdout, report, sarif } = await runWithReport<RaceReport>(["--mode", "race", "--seconds", "1", "--sarif-location", "src/tools/read.ts"]);
    const { total, perOperation, notApplicable, racer } = report;
    // A result per operation that escaped, and one when anything changed outside; none otherwise.
    expect(findings(sarif)).toEqual([
      ...RACE_OPERATIONS.filter((operation) => (perOperation[operation]?.escapes ?? 0) > 0).map((operation) => [`toctou.${operation}`, raceOperationTool(operation) === "read" ? "outside read" : "outside changed", "a concurrent process"]),
      ...(report.sideEffects.total > 0 ? [["toctou.outside", "outside changed", "a concurrent process"]] : []),
    ]);
    expect(sarif.runs[0].results.every((result) => result.locations[0]?.physicalLocation.artifactLocation.uri === "src/tools/read.ts")).toBe(true);
    const rows = Object.values(perOperation);
    expect(report.stoppedBy).toBe("seconds");
    expect(total.attempts).toBeGreaterThan(0);
    // The chapter's tools read and write: every other operation is named as not applicable, never as clean.
    const chapters = RACE_OPERATIONS.filter((operation) => ["read", "write"].includes(raceOperationTool(operation)));
    expect(Object.keys(perOperation)).toEqual(chapters);
    expect(Object.keys(notApplicable)).toEqual(RACE_OPERATIONS.filter((operation) => !chapters.includes(operation)));
    expect(notApplicable["mkdir.directory"]).toBe("the target has no tool that makes a directory");
    expect(stdout).toContain("mkdir.directory     not applicable: the target has no tool that makes a directory");
    for (const tally of [total, ...rows]) expectConsistent(tally);
    for (const count of ["attempts", "escapes", "succeeded", "refused", "otherErrors"] as const)
      expect(total[count]).toBe(rows.reduce((sum, tally) => sum + tally[count], 0));
    // Reads change nothing; each escaped write leaves its bytes in a new file outside, or in the
    // overwritten canary outside/secret.txt (one change, however often): every side effect is one of
    // those, and none goes unseen.
    const writeEscapes = RACE_OPERATIONS.filter((operation) => raceOperationTool(operation) === "write").reduce(
      (sum, operation) => sum + (perOperation[operation]?.escapes ?? 0),
      0,
    );
    const { filesWithContent, other } = report.sideEffects;
    expect(report.sideEffects.total).toBe(filesWithContent + other);
    expect(other).toBeLessThanOrEqual(1);
    expect(filesWithContent + other).toBeLessThanOrEqual(writeEscapes);
    expect(filesWithContent + other > 0).toBe(writeEscapes > 0);
    const earliest = rows
      .map((tally) => tally.firstEscape)
      .filter((first) => first !== null)
      .map((first) => first.elapsedMs);
    expect(total.firstEscape?.elapsedMs).toBe(earliest.length === 0 ? undefined : Math.min(...earliest));
    expect(racer.swaps).toBeGreaterThan(0);
    expect(total.swaps).toBe(racer.swaps);
    // Every name an operation goes through was flipped, and each counts only its own flips.
    for (const tally of rows) {
      expect(tally.swaps).toBeGreaterThan(0);
      expect(tally.swaps).toBeLessThan(racer.swaps);
    }
    expect(perOperation["read.directory"]?.swaps).toBe(perOperation["write.directory"]?.swaps);
    expect(racer.swapsPerSecond).toBeGreaterThan(0);
    expect(racer.failure).toBeNull();
    for (const operation of RACE_OPERATIONS)
      for (const evidence of perOperation[operation]?.evidence ?? []) expect(stdout).toContain(`\n  ${operation}: ${evidence}\n`);
    expect(report.callsPerSecond).toBeCloseTo(total.attempts / (report.elapsedMs / 1_000), 6);
    expect(stdout).toContain(`  calls: ${total.attempts} in ${(report.elapsedMs / 1_000).toFixed(1)} s (${Math.round(report.callsPerSecond)} calls/s)\n`);
    expect(code).toBe(total.escapes > 0 || report.sideEffects.total > 0 ? 1 : 0);
    expect(stdout).toContain(`content escapes: ${total.escapes} of ${total.attempts} tool calls\n`);
    expect(stdout.includes(`no escape and nothing changed outside in ${total.attempts} attempts within the budget`)).toBe(total.escapes === 0);
    expect(existsSync(report.workdir)).toBe(false);
  });

  it("stops after exactly --attempts tool calls, taking the operations in turn", async () => {
    const { report, stdout } = await runWithReport<RaceReport>(["--mode", "race", "--attempts", "7", "--seconds", "60"]);
    expect(report.stoppedBy).toBe("attempts");
    expect(report.total.attempts).toBe(7);
    expect(stdout).toMatch(/^result after \d+\.\d s \(stopped at its budget of attempts\):$/m);
    expect(Object.fromEntries(Object.entries(report.perOperation).map(([operation, tally]) => [operation, tally.attempts]))).toEqual({
      "write.directory": 2,
      "overwrite.directory": 2,
      "overwrite.leaf": 1,
      "read.directory": 1,
      "read.leaf": 1,
    });
    expectConsistent(report.total);
    expect(existsSync(report.workdir)).toBe(false);
  });

  it("counts a refusal in a server's own words as refused, and an operating system's error as another error", async () => {
    const missing = await fsPromises.readFile(join(reportDir, "missing")).then(() => "", (error: Error) => error.message);
    const refusals = ["read: path escapes workspace", "Access denied - path outside allowed directories: /tmp/x not in /tmp/ws", "refused: d/x leaves the workspace", "Error: path is outside the root"];
    const osErrors = [missing, "[Errno 2] No such file or directory: 'd/x'", "open d/x: no such file or directory", "No such file or directory (os error 2)", "ELOOP: too many symbolic links encountered, open 'd/x'", "[Errno 40] Too many levels of symbolic links"];
    expect(missing).toMatch(/^ENOENT/);
    expect(refusals.filter((text) => !isRefusal(text))).toEqual([]);
    expect(osErrors.filter((text) => isRefusal(text))).toEqual([]);
  });

  it("counts the refusals of a module worded otherwise than the reference", async () => {
    const { report } = await runWithReport<RaceReport>(["--mode", "race", "--attempts", "200", "--seconds", "60", "--target", "fixtures/secure/own-wording.mjs"]);
    expect(report.total.attempts).toBe(200);
    expect(report.total.refused).toBeGreaterThan(0);
  }, 60_000);

  it("on SIGINT stops after the call in flight, stops the racer, removes the temp dir and answers 130", async () => {
    const listenersBefore = process.listenerCount("SIGINT");
    const json = join(reportDir, "interrupted.json");
    const { io, stdout } = capture();
    const running = toctouCommand.run(["--mode", "race", "--seconds", "60", "--json", json], io);
    await until(() => stdout().includes("racer started"), 10_000);
    expect(process.listenerCount("SIGINT")).toBe(listenersBefore + 1);
    process.emit("SIGINT", "SIGINT");
    expect(await running).toBe(130);
    const report = JSON.parse(await readFile(json, "utf8")) as RaceReport;
    expect(report.stoppedBy).toBe("interrupted");
    expect(stdout()).toMatch(/^interrupted after \d+\.\d s; racer stopped$/m);
    expect(stdout()).toMatch(/^result after \d+\.\d s \(interrupted\):$/m);
    expect(stdout()).not.toContain("stopped by");
    expect(stdout()).toContain(`removed ${report.workdir}`);
    expect(existsSync(report.workdir)).toBe(false);
    expect(process.listenerCount("SIGINT")).toBe(listenersBefore);
  });
});

describe("flags", () => {
  it("prints the usage for --help and creates nothing", async () => {
    const { io, stdout } = capture();
    await expect(toctouCommand.run(["--help"], io)).resolves.toBe(0);
    expect(stdout()).toBe(TOCTOU_USAGE);
  });

  it.each([
    [["--mode", "sideways"], 'unknown mode "sideways"; use deterministic or race'],
    [["--tools", "sandboxed"], 'unknown tool set "sandboxed"; available: chapter, verified'],
    [["--bogus"], "unknown flag --bogus"],
    [["extra"], "unexpected argument extra"],
    [["--json"], "--json needs a value"],
    [["--mode", "race", "--attempts", "0"], '--attempts must be a positive whole number up to 1000000000, got "0"'],
    [["--mode", "race", "--attempts", "1.5"], '--attempts must be a positive whole number up to 1000000000, got "1.5"'],
    [["--mode", "race", "--attempts", "0x10"], '--attempts must be a positive whole number up to 1000000000, got "0x10"'],
    [["--mode", "race", "--seconds", "abc"], '--seconds must be a positive number up to 3600, got "abc"'],
    [["--mode", "race", "--seconds", "3601"], '--seconds must be a positive number up to 3600, got "3601"'],
    [["--attempts", "5"], "--attempts and --seconds bound a race; they apply to --mode race only"],
    [["--svg"], "--svg needs a value"],
    [["--sarif-location", "x.ts"], "--sarif-location says where SARIF results point: give it with --sarif"],
  ])("refuses %j with a UsageError before creating anything", async (args, message) => {
    const before = (await readdir(tmpdir())).filter((name) => name.startsWith(TEMP_PREFIX));
    const { io, stdout } = capture();
    const run = toctouCommand.run(args, io);
    await expect(run).rejects.toThrow(message);
    await expect(run).rejects.toBeInstanceOf(UsageError);
    expect(stdout()).toBe("");
    expect((await readdir(tmpdir())).filter((name) => name.startsWith(TEMP_PREFIX))).toEqual(before);
  });
});

describe("tool sets", () => {
  it("builds the chapter's and the verified read and write, and names what a set lacks", async () => {
    const box = await createSandbox(TEMP_PREFIX);
    try {
      expect([...TOOL_SETS.keys()]).toEqual(["chapter", "verified"]);
      for (const toolSet of TOOL_SETS.values()) {
        const { read, write } = attackedTools(toolSet.create(box.root));
        expect([read.spec.name, write.spec.name]).toEqual(["read", "write"]);
      }
      const chapter = TOOL_SETS.get("chapter")?.create(box.root) ?? [];
      expect(() => attackedTools(chapter.filter((tool) => tool.spec.name !== "write"))).toThrow(
        'the tool set has no "write" tool (it has: read, bash)',
      );
    } finally {
      await box.dispose();
    }
    expect(existsSync(box.base)).toBe(false);
  });
});
