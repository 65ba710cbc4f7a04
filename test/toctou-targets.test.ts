// `toctou` on any target: a module (--target), an MCP server (--mcp) through the audit's client, and a
// race that did not race (no swap, or a control that never escaped) is exit 2, never 0.
import { existsSync } from "node:fs";
import { appendFile, copyFile, mkdtemp, readFile, readdir, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { XMLValidator } from "fast-xml-parser";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DeterministicReport } from "../src/kit/toctou/deterministic.js";
import { type ControlRace, raceExitCode, raceIneffective } from "../src/kit/toctou/command.js";
import { RACE_OPERATIONS, type RaceOperation, type RaceReport, raceOperationTool, runRace } from "../src/kit/toctou/race.js";
import type { Racer } from "../src/kit/toctou/racer.js";
import { toctouSarif } from "../src/kit/toctou/sarif.js";
import { type Sandbox, createSandbox } from "../src/kit/sandbox/sandbox.js";
import type { Tool } from "../src/gates/tool.js";
import { schema } from "../src/gates/schema.js";
import { surfaceTools } from "../fixtures/surface/surface.js";
import { TOOL_SETS } from "../src/kit/sandbox/tool-sets.js";
import { moduleSurface } from "../src/kit/operations/surface.js";
import { cli } from "./support/cli.js";
import { multitoolErrors } from "./support/ci-reports.js";
import { LINUX_PROCFS, describeNeeding } from "./support/platform.js";

const SERVED_CHAPTER = ["node", "--import", "tsx", "fixtures/mcp/tools-server.ts", "reference", "{root}"];
const SERVED_SURFACE = ["node", "--import", "tsx", "fixtures/mcp/tools-server.ts", "fixtures/surface/surface.ts", "{root}"];

let reportDir: string;
beforeEach(async () => {
  reportDir = await mkdtemp(join(tmpdir(), "toctou-targets-test-"));
});
afterEach(async () => {
  await rm(reportDir, { recursive: true, force: true });
});

async function toctou<Report>(...argv: string[]) {
  const json = join(reportDir, "report.json");
  const cut = argv.includes("--") ? argv.indexOf("--") : argv.length;
  const result = await cli(["toctou", ...argv.slice(0, cut), "--json", json, ...argv.slice(cut)]);
  return { ...result, report: existsSync(json) ? (JSON.parse(await readFile(json, "utf8")) as Report) : undefined };
}

describe("toctou on any target", () => {
  it("--target MODULE attacks that module's tools: the chapter's, unnamed, escape in deterministic mode", async () => {
    const { code, report } = await toctou<DeterministicReport>("--target", "src/tools/workspace-tools.ts");
    expect(report?.tools).toBe("src/tools/workspace-tools.ts");
    expect(report?.contentEscapes).toBeGreaterThan(0);
    expect(code).toBe(1);
  });

  it("--mode race --target MODULE races that module: a chapter-like one escapes, exit 1", { timeout: 60_000 }, async () => {
    const { code, report } = await toctou<RaceReport & { control: ControlRace }>("--mode", "race", "--seconds", "3", "--target", "src/tools/workspace-tools.ts");
    expect(report?.tools).toBe("src/tools/workspace-tools.ts");
    expect(report?.total.escapes).toBeGreaterThan(0);
    expect(code).toBe(1);
  });

  describeNeeding(LINUX_PROCFS, "the verified tools as a module", () => {
    it("--mode race --target on the verified tools exits 0 beside a control that escaped, and states the bound", { timeout: 60_000 }, async () => {
      const { code, stdout, report } = await toctou<RaceReport & { control: ControlRace }>("--mode", "race", "--seconds", "3", "--target", "fixtures/secure/verified-tools.ts");
      expect(report?.total.escapes).toBe(0);
      expect(report?.sideEffects.total).toBe(0);
      expect(report?.control.escapes).toBeGreaterThan(0);
      expect(stdout).toContain(`rule of three: 0 escapes in ${report?.total.attempts} calls puts the per-call escape rate below`);
      expect(code).toBe(0);
    });
  });

  it("summarises the control race in one line, and a line saying it runs, unless --show-control asks for it line by line", { timeout: 60_000 }, async () => {
    const controlLines = (stdout: string) => stdout.split("\n").filter((line) => line.startsWith("control"));
    const quiet = await toctou<RaceReport & { control: ControlRace }>("--mode", "race", "--attempts", "40", "--seconds", "30", "--target", "src/tools/workspace-tools.ts");
    expect(quiet.report?.control.attempts).toBe(40);
    expect(controlLines(quiet.stdout)).toEqual([
      "control: racing the chapter tools for the same budget, to show the racer can win (--show-control prints it line by line)",
      `control (the chapter tools, same budget): ${quiet.report?.control.escapes} escapes in 40 calls, ${quiet.report?.control.swaps} swaps`,
    ]);
    const loud = await toctou("--mode", "race", "--attempts", "40", "--seconds", "30", "--target", "src/tools/workspace-tools.ts", "--show-control");
    expect(controlLines(loud.stdout).filter((line) => line.startsWith("control: ")).length).toBeGreaterThan(2);
    expect(loud.stdout).toMatch(/^control: racer started/m);
    const deterministic = await toctou("--show-control");
    expect(deterministic.code).toBe(2);
    expect(deterministic.stderr).toContain("--show-control shows the control race; it applies to --mode race only");
  });

  it("--mode race --svg draws the escapes over time of the target beside its control, each step one escape the report counted", { timeout: 60_000 }, async () => {
    const svg = join(reportDir, "race.svg");
    const { report } = await toctou<RaceReport & { control: ControlRace }>("--mode", "race", "--attempts", "150", "--seconds", "30", "--target", "src/tools/workspace-tools.ts", "--svg", svg);
    const picture = await readFile(svg, "utf8");
    expect(XMLValidator.validate(picture)).toBe(true);
    expect(picture).not.toMatch(/<script|href=/);
    const lines = [...picture.matchAll(/<g data-tools="([^"]*)" data-escapes="(\d+)">([^]*?)<\/g>/g)].map(([, tools, escapes, body = ""]) => ({ tools, escapes: Number(escapes), steps: [...body.matchAll(/data-at-ms="([\d.]+)"/g)].map(([, at]) => Number(at)) }));
    expect(lines.map(({ tools }) => tools)).toEqual(["src/tools/workspace-tools.ts", "chapter (control)"]);
    expect(lines.map(({ escapes }) => escapes)).toEqual([report?.total.escapes, report?.control.escapes]);
    for (const { escapes, steps } of lines) {
      expect(steps).toHaveLength(escapes);
      expect(steps).toEqual([...steps].sort((a, b) => a - b));
    }
    // 150 attempts may win no race on a given run: then the target's line draws no step at all.
    const first = report?.total.firstEscape?.elapsedMs;
    if (first === undefined) expect(lines[0]?.steps).toEqual([]);
    else expect(lines[0]?.steps[0]).toBeCloseTo(first, 0);
  });

  it("--target refuses a module without createWorkspaceTools, exit 2", async () => {
    const { code, stderr } = await toctou("--target", "src/gates/is-inside.ts");
    expect(code).toBe(2);
    expect(stderr).toMatch(/exports no createWorkspaceTools function/);
  });

  it("--mcp races every operation an MCP server's tools do through the audit's client, with a racer that swapped", { timeout: 90_000 }, async () => {
    const attempts = RACE_OPERATIONS.length * 10;
    const sarif = join(reportDir, "race.sarif");
    const { code, report } = await toctou<RaceReport & { control: ControlRace }>(
      "--attempts", String(attempts), "--seconds", "60", "--sarif", sarif, "--mapping", "fixtures/mcp/tools-server.json", "--mcp", "--", ...SERVED_SURFACE,
    );
    // A race over MCP writes SARIF that code scanning takes, every result at the mapping.
    expect(await multitoolErrors([sarif])).toEqual([]);
    const log = JSON.parse(await readFile(sarif, "utf8")) as { runs: [{ results: { locations: { physicalLocation: { artifactLocation: { uri: string } } }[] }[] }] };
    for (const result of log.runs[0].results) expect(result.locations[0]?.physicalLocation.artifactLocation.uri).toBe("fixtures/mcp/tools-server.json");
    expect(report?.mode).toBe("race");
    expect(report?.tools).toMatch(/^mcp: node --import tsx fixtures\/mcp\/tools-server\.ts/);
    expect(report?.total.attempts).toBe(attempts);
    // The whole surface has a tool for every operation, so every one is raced, ten calls each.
    expect(report?.notApplicable).toEqual({});
    expect(Object.entries(report?.perOperation ?? {}).map(([operation, tally]) => [operation, tally.attempts])).toEqual(RACE_OPERATIONS.map((operation) => [operation, 10]));
    expect(report?.racer.swaps).toBeGreaterThan(0);
    expect(report?.control).toMatchObject({ tools: "chapter", attempts, swaps: expect.any(Number) });
    const escaped = (report?.total.escapes ?? 0) > 0 || (report?.sideEffects.total ?? 0) > 0;
    const controlEscaped = (report?.control.escapes ?? 0) > 0 || (report?.control.sideEffects ?? 0) > 0;
    expect(code).toBe(escaped ? 1 : controlEscaped ? 0 : 2);
  });

  it("--mcp refuses a mapping that names a mkdir the server lacks (a misspelt name), exit 2, and without one named races the tool it classifies as mkdir", { timeout: 60_000 }, async () => {
    const mappings = await mkdtemp(join(tmpdir(), "toctou-mapping-"));
    try {
      const served = JSON.parse(await readFile("fixtures/mcp/tools-server.json", "utf8")) as Record<string, unknown>;
      const misspelt = join(mappings, "misspelt.json");
      await writeFile(misspelt, JSON.stringify({ ...served, mkdir: { tool: "make_dir" } }));
      const refused = await cli(["toctou", "--attempts", "12", "--mapping", misspelt, "--mcp", "--", ...SERVED_CHAPTER]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/the MCP server has no tool "make_dir" \(the mapping's mkdir\.tool\); it has: read, write, mkdir/);
      const { mkdir: _named, ...unnamed } = served;
      const left = join(mappings, "unnamed.json");
      await writeFile(left, JSON.stringify(unnamed));
      const { report } = await toctou<RaceReport>("--attempts", "12", "--seconds", "30", "--mapping", left, "--mcp", "--", ...SERVED_CHAPTER);
      // The server lists `mkdir`, the contract's own name for the operation.
      expect(report?.notApplicable["mkdir.directory"]).toBeUndefined();
      expect(report?.perOperation["mkdir.directory"]?.attempts).toBeGreaterThan(0);
    } finally {
      await rm(mappings, { recursive: true, force: true });
    }
  });

  it("says deterministic mode is not applicable over MCP, exit 2", async () => {
    const { code, stderr } = await cli(["toctou", "--mode", "deterministic", "--mcp", "--", "srv"]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--mode deterministic is not applicable over MCP/);
  });

  it.each([
    [["--tools", "chapter", "--target", "m.ts"], /give one of --tools, --target and --mcp/],
    [["--mcp"], /--mcp needs the server's command after --/],
    [["--", "srv"], /a command after -- is for --mcp/],
  ])("refuses %j with exit 2", async (argv, message) => {
    const { code, stderr } = await cli(["toctou", ...argv]);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });
});

describe("the race's evidence, one operation at a time, with a racer that never swaps", () => {
  const stuck: Racer = { threadId: 0, swaps: () => 0, failure: () => null, stop: async () => ({ swaps: 0, swapsPerArena: [], evictions: 0, runningMs: 1_000, failure: null }) };
  /** Each operation the tools offer, twice. */
  const raceTwice = async (box: Sandbox, tools: Tool[]) => {
    const surface = moduleSurface(tools);
    const offered = RACE_OPERATIONS.filter((operation) => surface.of(raceOperationTool(operation)).length > 0);
    return runRace({ box, toolsName: "test", surface, budget: { attempts: offered.length * 2, seconds: 60 }, narrate: () => {}, signal: new AbortController().signal, startRacer: async () => stuck });
  };

  it("finds nothing against tools that do every operation inside, and counts each as a success", async () => {
    const box = await createSandbox("toctou-evidence-");
    try {
      const report = await raceTwice(box, surfaceTools(box.root));
      expect(Object.keys(report.perOperation)).toEqual([...RACE_OPERATIONS]);
      for (const [operation, tally] of Object.entries(report.perOperation)) {
        expect(tally.attempts, operation).toBe(2);
        expect(tally.escapes, operation).toBe(0);
        // The move of race/secret.txt takes the decoy on its first call, and no racer puts it back
        // here: the delete after it, the second read and the move's second call find nothing.
        const found = { "read.directory": 1, "move.source": 1, "delete.directory": 0 }[operation as string] ?? 2;
        expect(tally.succeeded, operation).toBe(found);
      }
      expect(report.sideEffects.total).toBe(0);
    } finally {
      await box.dispose();
    }
  });

  it("finds each escape of tools that do every operation outside, by its evidence, and puts a taken canary back", async () => {
    const box = await createSandbox("toctou-evidence-");
    try {
      const outsideDir = join(box.outside, "dir");
      const canary = await readFile(join(outsideDir, "secret.txt"), "utf8");
      const inside = (path: string) => join(box.root, path);
      const tool = (name: string, run: (input: Record<string, string>) => Promise<string>): Tool => ({
        spec: { name, description: name, inputSchema: schema([], {}) },
        execute: async (input) => ({ content: await run(input as Record<string, string>) }),
      });
      // Each does its operation on the outside, where the swap would have sent it.
      const escaping = [
        tool("edit", async ({ newText }) => (await appendFile(join(box.outside, "secret.txt"), newText ?? ""), "edited")),
        tool("ls", async () => (await readdir(outsideDir)).join("\n")),
        tool("move", async ({ source = "", destination = "" }) => {
          if (source.startsWith("race/")) await rename(join(outsideDir, basename(source)), inside(destination));
          else await rename(inside(source), join(outsideDir, basename(destination)));
          return "moved";
        }),
        tool("copy", async ({ source = "", destination = "" }) => (await copyFile(inside(source), join(outsideDir, basename(destination))), "copied")),
        tool("delete", async ({ path = "" }) => (await rm(join(outsideDir, basename(path))), "removed")),
      ];
      const report = await raceTwice(box, escaping);
      const escapes = Object.fromEntries(Object.entries(report.perOperation).map(([operation, tally]) => [operation, tally.escapes]));
      expect(escapes).toEqual({ "edit.directory": 2, "edit.leaf": 2, "list.directory": 2, "move.source": 2, "move.destination": 2, "copy.destination": 2, "delete.directory": 2 });
      expect(report.perOperation["move.source"]?.evidence[0]).toBe("outside/dir/secret.txt was moved into the workspace as ws/taken-4.txt");
      expect(report.perOperation["delete.directory"]?.evidence[0]).toBe("outside/dir/secret.txt was removed");
      expect(report.perOperation["list.directory"]?.evidence[0]).toBe("the listing named secret.txt, which only outside/dir holds");
      expect(await readFile(join(outsideDir, "secret.txt"), "utf8"), "the canary a move or a delete took is back").toBe(canary);
      // Each escape costs what its evidence shows: a listing reveals, everything else here changes the outside.
      const sarif = JSON.parse(toctouSarif(report, "package.json")) as { runs: [{ results: { ruleId: string; properties: { consequence: string } }[] }] };
      expect(Object.fromEntries(sarif.runs[0].results.map((result) => [result.ruleId, result.properties.consequence]))).toEqual({
        "toctou.edit.directory": "outside changed",
        "toctou.edit.leaf": "outside changed",
        "toctou.list.directory": "outside revealed",
        "toctou.move.source": "outside changed",
        "toctou.move.destination": "outside changed",
        "toctou.copy.destination": "outside changed",
        "toctou.delete.directory": "outside changed",
        "toctou.outside": "outside changed",
      });
    } finally {
      await box.dispose();
    }
  });
});

describe("a race that did not race", () => {
  it("a whole race with a racer that cannot swap ends in exit 2, even for tools that would pass clean", async () => {
    const box = await createSandbox("toctou-stuck-racer-");
    try {
      const stuck: Racer = { threadId: 0, swaps: () => 0, failure: () => null, stop: async () => ({ swaps: 0, swapsPerArena: [0, 0, 0, 0], evictions: 0, runningMs: 1_000, failure: null }) };
      const verified = TOOL_SETS.get("verified");
      if (verified === undefined) throw new Error("no verified tool set");
      const report = await runRace({
        box,
        toolsName: "verified",
        surface: moduleSurface(verified.create(box.root)),
        budget: { attempts: 40, seconds: 30 },
        narrate: () => {},
        signal: new AbortController().signal,
        startRacer: async () => stuck,
      });
      expect(report.total.attempts).toBe(40);
      expect(report.total.escapes + report.sideEffects.total).toBe(0);
      expect(raceIneffective(report, undefined)).toBe("the racer made no swap");
      expect(raceExitCode(report)).toBe(2);
    } finally {
      await box.dispose();
    }
  });

  const report = (swaps: number, failure: string | null, escapes = 0, perOperation: Partial<Record<RaceOperation, { attempts: number; swaps: number }>> = {}) =>
    ({ total: { escapes }, perOperation, sideEffects: { total: escapes }, racer: { swaps, runningMs: 1_000, swapsPerSecond: swaps, evictions: 0, failure } }) as unknown as RaceReport;
  const control = (escapes: number): ControlRace => ({ tools: "chapter", attempts: 100, escapes, sideEffects: escapes, swaps: 50 });

  it("is exit 2, never a clean 0, when the racer made no swap or failed, or the control did not escape", () => {
    expect(raceExitCode(report(0, null))).toBe(2);
    expect(raceExitCode(report(5, "EPERM"))).toBe(2);
    expect(raceExitCode(report(5, null), control(0))).toBe(2);
    expect(raceIneffective(report(5, null), control(0))).toMatch(/the control \(the chapter tools, whose window is known\) did not escape/);
    // Swaps of one name prove nothing about an operation whose path goes through another.
    const oneNameOnly = report(5, null, 0, { "read.directory": { attempts: 10, swaps: 5 }, "read.leaf": { attempts: 10, swaps: 0 } });
    expect(raceIneffective(oneNameOnly, control(3))).toBe("the racer never swapped the name that read.leaf goes through");
    expect(raceExitCode(oneNameOnly, control(3))).toBe(2);
  });

  it("is 0 only for a clean race that could win, and 1 on evidence whatever the control showed", () => {
    expect(raceExitCode(report(5, null), control(3))).toBe(0);
    expect(raceExitCode(report(5, null))).toBe(0);
    expect(raceExitCode(report(5, null, 2), control(0))).toBe(1);
    expect(raceExitCode(report(5, "ENOENT", 2)), "evidence found before the racer failed").toBe(1);
  });
});
