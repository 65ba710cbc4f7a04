/**
 * `--mode deterministic`: the attacker moves exactly between the check and the use, once per tool,
 * so the outcome does not depend on timing.
 *
 * For each of `read` and `write`, a fresh contested directory (arena.ts) is set up, a realpath trap
 * (fs-trap.ts) is set on it, and the real tool is called once. The first successful realpath of
 * a path in the contested directory whose answer is inside the workspace is the tool's check; right
 * after it, the attacker swaps the directory for a symlink to outside/dir; then the tool opens the path
 * it checked.
 *
 * Promises: an outcome of "escaped" rests on evidence, never on the tool's own success or error: for
 * read, the returned content holds the canary SECRET, which exists only in files outside the
 * workspace; for write, a file exists in outside/dir with exactly the bytes the tool was given.
 * "contained" means the check was seen, the swap was made and no such evidence appeared; "no-check"
 * means the tool never asked realpath about the contested directory, so the move could not be placed
 * and nothing is claimed. Separately from the outcome, each scenario reports its side effects: every
 * change outside the workspace it left (an empty file, a directory, anything; side-effects.ts), so a
 * tool that leaks no content but still creates something outside is seen; the report adds them all
 * up. Each step is narrated as it happens.
 * Does not promise: anything about timing in the wild (that is race mode), or about checks the trap
 * cannot see (see fs-trap.ts).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { SECRET, type Sandbox, displayPath } from "../sandbox/sandbox.js";
import { isInside } from "../../gates/is-inside.js";
import type { ToolResult } from "../../gates/tool.js";
import { type Arena, DECOY, TARGET_FILE, prepareArena, swapInLink } from "./arena.js";
import { withRealpathTrap } from "./fs-trap.js";
import { type SideEffects, describeSideEffects, sideEffectsOf, sideEffectsSince } from "./side-effects.js";
import type { AttackedTools } from "../sandbox/tool-sets.js";

const QUOTE_MAX = 60;

export type ScenarioOutcome = "escaped" | "contained" | "no-check";

/**
 * One moment of a scenario, in milliseconds since the tool was called: the check the trap saw, the
 * attacker's swap right after it, and the tool's answer, by which time it has used the path.
 */
export interface TimelineEvent {
  step: "call" | "check" | "swap" | "answer";
  atMs: number;
  what: string;
}

export interface DeterministicScenario {
  tool: "read" | "write";
  input: { path: string; content?: string };
  /** The realpath call after which the attacker moved; null when the tool made none on the contested directory. */
  check: { path: string; answer: string } | null;
  result: ToolResult;
  outcome: ScenarioOutcome;
  evidence: string;
  /** What this scenario changed outside the workspace, whatever the outcome. */
  sideEffects: SideEffects;
  /** The run's own events, in the order they happened (timeline-svg.ts draws them). */
  timeline: TimelineEvent[];
}

export interface DeterministicReport {
  mode: "deterministic";
  tools: string;
  workdir: string;
  /** The workspace root inside `workdir`. */
  workspace: string;
  scenarios: DeterministicScenario[];
  /** Scenarios whose outcome is "escaped". */
  contentEscapes: number;
  /** Everything the whole run changed outside the workspace. */
  sideEffects: SideEffects;
  interrupted: boolean;
}

export interface DeterministicRun {
  box: Sandbox;
  toolsName: string;
  tools: AttackedTools;
  narrate: (line: string) => void;
  signal: AbortSignal;
}

const WRITE_PAYLOAD = "written by the write tool, which checked that build/report.txt was inside the workspace\n";

interface Plan {
  tool: "read" | "write";
  contestedName: string;
  input: { path: string; content?: string };
  setup: string;
  use: string;
  /** Looks for the escape where only an escape could leave a trace. */
  findEvidence(result: ToolResult, arena: Arena, box: Sandbox): Promise<{ escaped: boolean; evidence: string }>;
}

const PLANS: readonly Plan[] = [
  {
    tool: "read",
    contestedName: "docs",
    input: { path: `docs/${TARGET_FILE}` },
    setup: `ws/docs/ is a real directory; ws/docs/${TARGET_FILE} holds ${quoteShort(DECOY)}`,
    use: `read opens ws/docs/${TARGET_FILE}, the path it checked before the swap`,
    async findEvidence(result) {
      if (result.isError !== true && result.content.includes(SECRET))
        return { escaped: true, evidence: `that is the canary secret, which only files outside the workspace hold` };
      return { escaped: false, evidence: "that is not the canary secret" };
    },
  },
  {
    tool: "write",
    contestedName: "build",
    input: { path: "build/report.txt", content: WRITE_PAYLOAD },
    setup: "ws/build/ is a real directory; build/report.txt does not exist yet, so the check falls on ws/build",
    use: "write creates ws/build/report.txt, under the ws/build it checked before the swap",
    async findEvidence(_result, arena, box) {
      const landing = join(arena.outsideTarget, "report.txt");
      const landed = await readFile(landing, "utf8").catch((error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") return undefined;
        throw error;
      });
      if (landed === WRITE_PAYLOAD)
        return { escaped: true, evidence: `${Buffer.byteLength(landed)} bytes landed at ${displayPath(box, landing)}, outside the workspace` };
      return { escaped: false, evidence: `nothing the tool wrote is at ${displayPath(box, landing)}` };
    },
  },
];

export async function runDeterministic(run: DeterministicRun): Promise<DeterministicReport> {
  const { box, narrate } = run;
  narrate("TOCTOU, deterministic: the attacker moves exactly between the tool's check and its use.");
  narrate(`tool set: ${run.toolsName}; working in ${box.base} (removed at the end)`);
  narrate(`  ws/ is the workspace; outside/dir/${TARGET_FILE} is a canary holding ${SECRET}`);
  const scenarios: DeterministicScenario[] = [];
  for (const plan of PLANS) {
    if (run.signal.aborted) break;
    scenarios.push(await runScenario(plan, run));
  }
  return {
    mode: "deterministic",
    tools: run.toolsName,
    workdir: box.base,
    workspace: box.root,
    scenarios,
    contentEscapes: scenarios.filter((scenario) => scenario.outcome === "escaped").length,
    sideEffects: await sideEffectsOf(box),
    interrupted: run.signal.aborted,
  };
}

async function runScenario(plan: Plan, { box, tools, narrate }: DeterministicRun): Promise<DeterministicScenario> {
  const arena = await prepareArena(box, plan.contestedName);
  const outsideBefore = await box.outsideChanges();
  const shown = (path: string) => displayPath(box, path);
  narrate("");
  narrate(`${plan.tool} ${JSON.stringify(plan.input.path)}`);
  narrate(`  1. setup   ${plan.setup}`);
  let check = null as DeterministicScenario["check"];
  const start = performance.now();
  const timeline: TimelineEvent[] = [];
  const record = (step: TimelineEvent["step"], what: string) => timeline.push({ step, atMs: performance.now() - start, what });
  record("call", `${plan.tool} ${JSON.stringify(plan.input.path)}`);
  const result = await withRealpathTrap(
    {
      springsOn: (path, answer) => isInside(arena.contested, path) && isInside(box.root, answer),
      move(path, answer) {
        check = { path, answer };
        record("check", `realpath(${shown(path)}) = ${shown(answer)}: inside`);
        narrate(`  2. check   realpath(${shown(path)}) = ${shown(answer)}, inside the workspace: check passed`);
        swapInLink(arena);
        record("swap", `ws/${plan.contestedName} -> ${shown(arena.outsideTarget)}`);
        narrate(`  3. swap    attacker moves ws/${plan.contestedName} aside and renames a symlink into its place: ws/${plan.contestedName} -> ${shown(arena.outsideTarget)}`);
      },
    },
    () => tools[plan.tool].execute(plan.input),
  );
  record("answer", quoteShort(result.content));
  const sideEffects = await sideEffectsSince(box, outsideBefore);
  const outsideLine = `outside side effects outside the workspace: ${describeSideEffects(sideEffects)}${sideEffects.examples.map((example) => `\n             ${example}`).join("")}`;
  if (check === null) {
    narrate(`  2. check   none seen: the tool never asked realpath about ws/${plan.contestedName}, so the attacker had no moment to move`);
    narrate(`  3. result  ${quoteShort(result.content)}; no verdict`);
    narrate(`  4. ${outsideLine}`);
    return { tool: plan.tool, input: plan.input, check, result, outcome: "no-check", evidence: "no check was seen", sideEffects, timeline };
  }
  narrate(`  4. use     ${plan.use}`);
  const { escaped, evidence } = await plan.findEvidence(result, arena, box);
  narrate(`  5. result  the tool answered ${quoteShort(result.content)}${result.isError === true ? " (an error)" : ""}`);
  narrate(`             ${evidence}: ${escaped ? "ESCAPED" : "contained"}`);
  narrate(`  6. ${outsideLine}`);
  return { tool: plan.tool, input: plan.input, check, result, outcome: escaped ? "escaped" : "contained", evidence, sideEffects, timeline };
}

/** A one-line JSON quote of `text`, cut to a readable length with an ellipsis when longer. */
export function quoteShort(text: string): string {
  const quoted = JSON.stringify(text);
  return quoted.length <= QUOTE_MAX ? quoted : `${quoted.slice(0, QUOTE_MAX - 4)}…"`;
}
