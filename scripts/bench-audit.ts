/**
 * The bench's `audit` section: how many generated cases per second each audit property gets through
 * (in process, over MCP, beside the forms it replaced), and where an MCP audit's time goes.
 */
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type fc from "fast-check";
import { ROOT_NAMES, candidate, modelledCandidate, rootSpellings } from "../src/kit/audit/arbitraries/index.js";
import { containmentCases, containmentWorkspacePath } from "../src/kit/audit/properties/containment.js";
import { OPERATION_PROPERTIES, type OperationCase, containmentRead, containmentWrite, operationCases } from "../src/kit/audit/properties/operations.js";
import { OPERATIONS, containmentId, operation } from "../src/kit/operations/catalog.js";
import { faultCases, faultsTools, faultsWorkspacePath } from "../src/kit/audit/properties/faults.js";
import { PROPERTIES } from "../src/kit/audit/properties/index.js";
import { precisionWorkspacePath } from "../src/kit/audit/properties/precision.js";
import { type AuditProperty, disposeSandboxes, poolSandboxes } from "../src/kit/audit/runner/property.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { type AuditTarget, loadTarget, referenceTarget, surfaceOf } from "../src/kit/operations/target.js";
import type { Surface } from "../src/kit/operations/surface.js";
import { connectServer } from "../src/kit/mcp/client.js";
import { FILESYSTEM_SERVER_MAPPING, type McpMapping, readMapping } from "../src/kit/mcp/mapping.js";
import { type McpAuditTarget, mcpTarget } from "../src/kit/mcp/target.js";
import { installOfficialServer } from "../test/support/official-server.js";
import type { Row } from "../test/support/bench-table.js";
import { type Section, withTempDir } from "./bench-section.js";

/**
 * The tree-based properties as the audit ran them before one tree served many probes: one probe per
 * tree, sandboxes in the OS temp directory (on disk). Measured in the same run as today's form.
 */
const ONE_PROBE_PER_TREE = new Map<string, fc.Arbitrary<unknown>>([
  [containmentWorkspacePath.id, containmentCases(candidate(), { maxProbes: 1 })],
  [containmentRead.id, operationCases(operation("read"), { maxProbes: 1 })],
  [containmentWrite.id, operationCases(operation("write"), { maxProbes: 1 })],
  [precisionWorkspacePath.id, containmentCases(modelledCandidate(), { maxProbes: 1 })],
  [faultsWorkspacePath.id, faultCases({ maxProbes: 1 })],
  [faultsTools.id, faultCases({ maxProbes: 1 })],
]);

/**
 * The same trees without the openings every tree of an operation property lays out first (issue 46:
 * the option sweep, the root's neighbours, the name twins, the special files, the long paths): what
 * they add to a tree's time, which the time budget's floor of runs pays.
 */
const WITHOUT_OPENINGS = new Map<string, fc.Arbitrary<unknown>>([
  [containmentRead.id, operationCases(operation("read"), { openings: [] })],
  [containmentWrite.id, operationCases(operation("write"), { openings: [] })],
]);

/** Issue 16's goal for the tree-based properties, beside ten times the one-probe-per-tree form. */
const TREE_CASES_PER_SECOND = 1_000;

interface Throughput {
  rate: number;
  cases: number;
  status: string;
  /** The measured block's time in milliseconds. */
  timeMs: number;
}

/** Cases judged per second: a probe of a tree-based property is one case, as one run used to be. */
async function casesPerSecond(property: AuditProperty<unknown>, target: AuditTarget, runs: number, { keepSandboxes = false, measured = () => {} } = {}): Promise<Throughput> {
  // As the audit's time budget runs them: a first block warms the sandboxes (and an MCP target's
  // servers) up, and the next block of the same stream, in the same sandboxes, is the one measured.
  // A property capped by maxRuns (one slow case) has no second block: its one case is measured.
  const warm = property.maxRuns === undefined;
  try {
    if (warm) await runProperty(property, target, { seed: 1, runs, keepSandboxes: true });
    measured();
    const result = await runProperty(property, target, { seed: 1, runs, firstRun: warm ? runs : 0, keepSandboxes: true });
    return { rate: (result.cases / Math.max(result.timeMs, 1)) * 1_000, cases: result.cases, status: result.status, timeMs: result.timeMs };
  } finally {
    if (!keepSandboxes) await disposeSandboxes();
  }
}

/** The calls a target's operation tools made, and for how long at least one of them was in flight. */
interface CallClock {
  calls: number;
  busyMs: number;
  reset(): void;
}

/**
 * The target with every call of its operation tools (`surface`, what the containment properties
 * call) timed: where a block's time goes, between the server answering and the audit's own work.
 */
function clockedCalls(target: McpAuditTarget): { target: McpAuditTarget; clock: CallClock } {
  let inFlight = 0;
  let busySince = 0;
  const clock: CallClock = {
    calls: 0,
    busyMs: 0,
    reset() {
      clock.calls = 0;
      clock.busyMs = 0;
    },
  };
  const timed = async <T>(call: () => Promise<T>): Promise<T> => {
    clock.calls += 1;
    if (inFlight++ === 0) busySince = performance.now();
    try {
      return await call();
    } finally {
      if (--inFlight === 0) clock.busyMs += performance.now() - busySince;
    }
  };
  const surface = (root: string): Surface => {
    const tools = surfaceOf(target, root);
    return { offered: tools.offered, of: (id) => tools.of(id).map((tool) => ({ ...tool, call: (input) => timed(() => tool.call(input)) })) };
  };
  // The target's getters (offered, serverFailure) stay live through the prototype.
  return { target: Object.assign(Object.create(target) as McpAuditTarget, { surface }), clock };
}

/**
 * What the audit does before its first property over MCP: a sandbox for every root name, and a server
 * on every spelling of each root (the audit starts them in the background; here they are all running
 * before anything is timed, so no figure holds a server's start).
 */
async function serversOnEveryRoot(target: McpAuditTarget): Promise<void> {
  const roots: string[] = [];
  await poolSandboxes(ROOT_NAMES, (box) => roots.push(...rootSpellings(box)));
  for (const root of roots) await target.start(root);
}

/** Runs `body` with the audit's sandboxes in the OS temp directory instead of tmpfs. */
async function onDisk<T>(body: () => Promise<T>): Promise<T> {
  const before = process.env.TMPDIR;
  process.env.TMPDIR = tmpdir();
  try {
    return await body();
  } finally {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
  }
}

/** An MCP server the audit section measures: how to start it, its mapping, and how the rows name it. */
interface BenchServer {
  name: string;
  words: string[];
  mapping: McpMapping;
}

/** The whole-surface fixture served over stdio: a tool for every operation, what CI can measure without the registry. */
async function fixtureServer(): Promise<BenchServer> {
  return { name: "fixture server", words: ["node", "--import", "tsx", "fixtures/mcp/tools-server.ts", SURFACE, "{root}"], mapping: await readMapping("fixtures/mcp/tools-server.json") };
}

/** The whole-surface fixture in process: the chapter's read and write, and a tool for every other operation. */
const SURFACE = "fixtures/surface/surface.ts";

/** Calls in flight for the floor rows beside one at a time: what a client that overlaps calls gets. */
const FLOOR_IN_FLIGHT = [4, 16] as const;

/** Calls per floor measure, after as many to warm up. */
const FLOOR_CALLS = 600;

/**
 * The floor under every over-MCP figure: the bare SDK client (the audit's own, mcp/client.ts) calling
 * the server's read or write tool on one root as fast as it answers, `inFlight` calls at a time. No
 * tree, no oracle: what a call costs on this machine in this run.
 */
async function callRate(server: BenchServer, operation: "read" | "write", inFlight: number): Promise<number> {
  return withTempDir("workspace-gates-bench-floor-", async (root) => {
    await writeFile(join(root, "f.txt"), "1 KiB\n".repeat(146));
    const connection = await connectServer(server.words, root);
    const { tool, path } = server.mapping[operation];
    const pathOf = (name: string) => (server.mapping.paths === "absolute" ? join(root, name) : name);
    const args = (index: number): Record<string, unknown> =>
      operation === "read" ? { [path]: pathOf("f.txt") } : { [path]: pathOf(`w-${index % 64}.txt`), [server.mapping.write.content]: "written by the bench\n" };
    const burst = async (calls: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          while (next < calls) {
            const answer = await connection.call(tool, args(next++));
            if (answer.isError) throw new Error(`${tool} failed during the bench: ${answer.text}`);
          }
        }),
      );
    };
    try {
      await burst(FLOOR_CALLS);
      const started = performance.now();
      await burst(FLOOR_CALLS);
      return FLOOR_CALLS / ((performance.now() - started) / 1_000);
    } finally {
      await connection.close();
    }
  });
}

/** The floor rows of a server, and its one-at-a-time rates, which the over-MCP rows are divided by. */
async function floorRows(server: BenchServer): Promise<{ rows: Row[]; oneAtATime: Record<"read" | "write", number> }> {
  const rows: Row[] = [];
  const oneAtATime = { read: 0, write: 0 };
  for (const operation of ["read", "write"] as const) {
    oneAtATime[operation] = await callRate(server, operation, 1);
    rows.push({ section: "audit", measure: `MCP floor, ${server.name}: ${server.mapping[operation].tool}, one call at a time`, gated: { value: oneAtATime[operation], unit: "calls/s" }, note: "the bare SDK client on one root" });
    for (const inFlight of FLOOR_IN_FLIGHT) {
      const rate = await callRate(server, operation, inFlight);
      rows.push({
        section: "audit",
        measure: `MCP floor, ${server.name}: ${server.mapping[operation].tool}, ${inFlight} calls in flight`,
        gated: { value: rate, unit: "calls/s" },
        bare: { label: "one at a time", value: oneAtATime[operation], unit: "calls/s" },
        ratio: rate / oneAtATime[operation],
      });
    }
  }
  return { rows, oneAtATime };
}

/** Issue 32's goal: the properties that attack read and write judge at least half as many cases per second as the server answers calls one at a time. */
const FLOOR_SHARE = 0.5;
const HELD_TO_THE_FLOOR: ReadonlySet<string> = new Set([containmentRead.id, containmentWrite.id]);

/** The over-MCP row of a property: its cases/s beside the server's one-at-a-time calls/s (of its write tool, for a property of an operation that changes the workspace). */
function overMcpRow(server: BenchServer, property: AuditProperty<unknown>, rate: Throughput, floor: Record<"read" | "write", number>, clock: CallClock, inProcess?: number): Row {
  const changes = OPERATIONS.some((operation) => operation.changes && containmentId(operation.id) === property.id);
  const against = changes ? "write" : "read";
  const ratio = rate.rate / Math.max(floor[against], 1e-9);
  // A failed property's time holds its shrinking: no rate to hold to a target.
  const held = HELD_TO_THE_FLOOR.has(property.id) && rate.status === "passed";
  return {
    section: "audit",
    measure: `audit ${property.id}: over MCP, ${server.name}`,
    gated: { value: rate.rate, unit: "cases/s" },
    bare: { label: `${server.mapping[against].tool} one at a time`, value: floor[against], unit: "calls/s" },
    ratio,
    ...(held ? { target: { text: `≥ ${FLOOR_SHARE}×`, holds: ratio >= FLOOR_SHARE } } : {}),
    note: `${rate.cases} cases, ${rate.status === "failed" ? "failed (the time holds its shrinking)" : rate.status}${inProcess === undefined ? "" : `; in process ${inProcess.toFixed(0)} cases/s`}${whereTheTimeWent(rate, clock)}`,
  };
}

/**
 * Where an over-MCP block's time went: calls per case, the share of the time a call was in flight, and
 * the call rate meanwhile. Not for a failed block, whose calls are mostly its shrinking's.
 */
function whereTheTimeWent(rate: Throughput, clock: CallClock): string {
  if (clock.calls === 0 || rate.cases === 0 || rate.status === "failed") return "";
  const share = Math.round((100 * clock.busyMs) / Math.max(rate.timeMs, 1));
  return `; ${(clock.calls / rate.cases).toFixed(1)} calls a case, a call in flight ${share} % of the time, ${Math.round(clock.calls / (clock.busyMs / 1_000))} calls/s meanwhile`;
}

/**
 * How many generated cases per second each audit property gets through on real temp directories: in
 * process (the reference, or for an operation of the catalogue the whole-surface fixture, which has a
 * tool for each) beside the one-probe-per-tree, on-disk form, and, where it applies, over MCP: the
 * whole surface served by fixtures/mcp/tools-server.ts over stdio, one server per sandbox root, beside
 * the bare client's call rate on the same server (its floor). Each is measured after a warm-up block,
 * as the audit's time budget runs it: the audit keeps its sandboxes, and the servers on their roots,
 * from one block and property to the next, so it pays their start-up once. With `--registry`, the
 * official MCP filesystem server too, installed from the npm registry into a temp project.
 */
/** The properties that change the tree in time (between two calls, during one): their cost is taken from the others' surplus. */
const TIME_PROPERTIES = ["sequences.innerSwap", "sequences.swapInCall"];

/** What the swaps in time cost beside every property's measured block in process, as a share of it. */
function timeShareRow(timeMs: ReadonlyMap<string, number>): Row {
  const all = [...timeMs.values()].reduce((sum, ms) => sum + ms, 0);
  const time = TIME_PROPERTIES.reduce((sum, id) => sum + (timeMs.get(id) ?? 0), 0);
  return {
    section: "audit",
    measure: `audit: the swaps in time (${TIME_PROPERTIES.join(", ")}), in process`,
    gated: { value: time, unit: "ms" },
    bare: { label: "every property's measured block", value: all, unit: "ms" },
    ratio: time / Math.max(all, 1e-9),
    note: "their share of the in-process blocks: each runs its few runs whole (maxRuns), which the floor of the others' runs leaves room for",
  };
}

export const auditSection: Section = {
  name: "audit",
  async run(options) {
    const reference = await referenceTarget();
    const surface = await loadTarget(SURFACE);
    const servers = [await fixtureServer(), ...(options.registry ? [await officialServer()] : [])];
    const rows: Row[] = [];
    const inProcess = new Map<string, number>();
    const timeMs = new Map<string, number>();
    for (const property of PROPERTIES) {
      const oneProbe = ONE_PROBE_PER_TREE.get(property.id);
      const target = OPERATION_PROPERTIES.includes(property as AuditProperty<OperationCase>) ? surface : reference;
      // In process, the two forms of a tree-based property run as many trees each, whatever its scale.
      const runs = oneProbe === undefined ? scaledRuns(property) : BLOCK_RUNS;
      const now = await casesPerSecond(property, target, runs);
      inProcess.set(property.id, now.rate);
      timeMs.set(property.id, now.timeMs);
      const before = oneProbe === undefined ? undefined : await onDisk(() => casesPerSecond({ ...property, arbitrary: oneProbe }, target, runs));
      rows.push({
        section: "audit",
        measure: `audit ${property.id}: throughput`,
        gated: { value: now.rate, unit: "cases/s" },
        ...(before === undefined
          ? {}
          : {
              bare: { label: "one probe per tree, on disk", value: before.rate, unit: "cases/s" as const },
              ratio: now.rate / Math.max(before.rate, 1e-9),
              target: { text: `≥ 10×, ≥ ${TREE_CASES_PER_SECOND} cases/s`, holds: now.rate >= 10 * before.rate && now.rate >= TREE_CASES_PER_SECOND },
            }),
        note: `${now.cases} cases, ${now.status}${before === undefined ? "" : `; before: ${before.cases} cases, ${before.status}`}`,
      });
      const plain = WITHOUT_OPENINGS.get(property.id);
      if (plain !== undefined) {
        const without = await casesPerSecond({ ...property, arbitrary: plain }, target, runs);
        rows.push({
          section: "audit",
          measure: `audit ${property.id}: a tree with its openings`,
          gated: { value: now.timeMs / runs, unit: "ms" },
          bare: { label: "the same trees without them", value: without.timeMs / runs, unit: "ms" },
          ratio: now.timeMs / Math.max(without.timeMs, 1e-9),
          note: `${(now.cases / runs).toFixed(0)} cases a tree with them, ${(without.cases / runs).toFixed(0)} without; ${now.status}, ${without.status}`,
        });
      }
    }
    rows.push(timeShareRow(timeMs));
    for (const server of servers) {
      const floor = await floorRows(server);
      rows.push(...floor.rows);
      const overMcp = mcpTarget(server.words, server.mapping);
      try {
        await overMcp.prepare();
        // The audit keeps its sandboxes, and the servers on their roots, from property to property.
        await serversOnEveryRoot(overMcp);
        const { target, clock } = clockedCalls(overMcp);
        for (const property of PROPERTIES) {
          // A figure held to a target is measured over as many trees as in process: one block of the
          // audit's scale is some eight trees, half a second, as noisy as the machine.
          const runs = HELD_TO_THE_FLOOR.has(property.id) ? BLOCK_RUNS : scaledRuns(property);
          const rate = await casesPerSecond(property, target, runs, { keepSandboxes: true, measured: clock.reset });
          if (rate.status !== "not-applicable") rows.push(overMcpRow(server, property, rate, floor.oneAtATime, clock, inProcess.get(property.id)));
        }
      } finally {
        await disposeSandboxes();
        await overMcp.dispose();
      }
    }
    return rows;
  },
};

/** Runs in a measured block: as many trees for every figure a target is held to, in process or over MCP. */
const BLOCK_RUNS = 40;

/** A property's runs per measured block: `BLOCK_RUNS` scaled as the audit scales its budget, at least 5, at most its cap. */
function scaledRuns(property: AuditProperty<unknown>): number {
  return Math.min(property.maxRuns ?? Infinity, Math.max(5, Math.round(BLOCK_RUNS * (property.budgetScale ?? 1))));
}

/** The official MCP filesystem server, installed from the registry; removed when the bench ends. */
async function officialServer(): Promise<BenchServer> {
  const installed = await installOfficialServer();
  removeAtEnd.push(installed.remove);
  return { name: installed.name, words: installed.words, mapping: FILESYSTEM_SERVER_MAPPING };
}

/** What the bench installed, removed once every section has run. */
export const removeAtEnd: (() => Promise<void>)[] = [];

