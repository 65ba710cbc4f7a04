// The whole surface (issue 31): the secure layer of fixtures/surface has a tool for every operation of
// the catalogue and passes every containment property, in process and served over MCP, with every tool
// attacked; each planted bug dies at the audit's default budget at seed 1 in process (over MCP, and at
// seeds 1 to 20: test/sweeps/surface.sweep.ts).
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SURFACE_VARIANTS } from "../fixtures/surface/catalog.js";
import { OPERATION_PROPERTIES } from "../src/kit/audit/properties/operations.js";
import { CALLS_IN_FLIGHT, disposeSandboxes } from "../src/kit/audit/runner/property.js";
import type { JsonReport } from "../src/kit/audit/reports/report.js";
import { SECRET } from "../src/kit/sandbox/sandbox.js";
import { type PropertyResult, runProperty } from "../src/kit/audit/runner/run.js";
import { OPERATIONS, containmentId } from "../src/kit/operations/catalog.js";
import { type AuditTarget, loadTarget, offeredTools, referenceTarget } from "../src/kit/operations/target.js";
import { cli, useScratch } from "./support/cli.js";
import { MAPPING_FILE, SECURE, defaultRuns, missedSeeds, property, served } from "./support/surface.js";

const scratch = useScratch("workspace-gates-surface-test-");

afterAll(() => disposeSandboxes());

describe("the secure surface", () => {
  it("offers a tool for every operation of the catalogue, each taken for it by its name", async () => {
    const offered = offeredTools(await loadTarget(SECURE));
    for (const { id } of OPERATIONS) {
      const playing = offered.filter(({ classification }) => classification.kind === "operation" && classification.operation === id);
      expect(playing.map(({ classification }) => classification.kind === "operation" && classification.by), id).toEqual(["name"]);
    }
    expect(offered.find((tool) => tool.name === "bash")?.classification.kind).toBe("no path");
  });

  it.each(OPERATION_PROPERTIES.map((operation) => operation.id))("passes %s at the default budget", { timeout: 60_000 }, async (id) => {
    const secure = await loadTarget(SECURE);
    const result: PropertyResult = await runProperty(property(id), secure, { seed: 1, runs: defaultRuns(id) });
    expect(result.status, `${result.reason}\n${result.counterexample}`).toBe("passed");
    expect(result.cases).toBeGreaterThan(defaultRuns(id));
  });
});

describe("each planted bug dies at the default budget, in process", () => {
  it.each(SURFACE_VARIANTS.filter((variant) => variant.mcpOnly !== true).flatMap((variant) => variant.caughtBy.map((id) => [variant.module, id] as const)))(
    "%s is killed by %s at seed 1",
    { timeout: 60_000 },
    async (module, id) => {
      expect(await missedSeeds(await loadTarget(`fixtures/surface/${module}.ts`), id, [1]), `${id} missed ${module}`).toEqual([]);
    },
  );
});

describe("shrunk counterexamples that once failed the judge, kept", () => {
  // Seed 3 of containment.move on this fork (before the judge looked for the root): the move took the
  // workspace itself out of the sandbox, and the judge's walk of it threw ENOENT, reported as the
  // tool's own hardening broken.
  it("a move of the workspace itself out is a finding of what it did, not the judge's ENOENT", async () => {
    const fork = await loadTarget("fixtures/surface/move-destination-unchecked.ts");
    const moved = { root: { name: "ws", spelling: "canonical" }, tree: [], probes: [{ source: { form: "absolute", area: "root", rest: "" }, destination: { form: "absolute", area: "outside", rest: "new.txt" }, tool: 0, variant: 0 }] };
    const verdict = await property("containment.move").check(fork, moved as never).then(() => undefined, (error: unknown) => error as Error & { consequence?: string });
    expect(verdict?.message).toMatch(/move \(call 1\) moved or removed the workspace itself[^]*added \S*\/outside\/new\.txt/);
    expect(verdict?.message).not.toMatch(/ENOENT/);
  });

  // Seed 1 of containment.copy on copy-destination-trimmed (issue 51), shrunk: the destination
  // `"tw0n "` is checked as a new name inside, and the copy made at `tw0n` goes through the link there.
  it("a copy whose destination is trimmed after its check makes a file outside through the link at the trimmed name; the secure copy refuses the link", async () => {
    const copyCase = {
      root: { name: "ws", spelling: "canonical" },
      tree: [
        { kind: "symlink", at: ["tw0n"], target: { form: "absolute", area: "outside", path: ["tw0n.txt"] } },
        { kind: "file", at: ["tw11fx"] },
      ],
      probes: [{ source: { form: "text", text: "tw11fx" }, destination: { form: "text", text: "tw0n " }, tool: 0, variant: 0 }],
    };
    const verdictOf = async (module: string) =>
      property("containment.copy")
        .check(await loadTarget(module), copyCase as never)
        .then(() => undefined, (error: unknown) => error as Error & { consequence?: string });
    const fork = await verdictOf("fixtures/surface/copy-destination-trimmed.ts");
    expect(fork?.consequence).toBe("outside changed");
    expect(fork?.message).toMatch(/outside the workspace changed:\s+added \S*\/outside\/tw0n\.txt$/);
    expect(await verdictOf(SECURE)).toBeUndefined();
  });

  // @modelcontextprotocol/server-filesystem 2025.7.1, seed 2: a read waited on the FIFO only when it
  // was asked a third time (its answer had moved with the outside), after its wave's last look for
  // waits; the next wave found the wait, could not name a call of another wave, and threw a TypeError
  // the report showed as the tool's hardening broken, with the reason "null".
  it("a FIFO wait of a call asked again is the finding of the call that waited, in whichever wave it is found", async () => {
    const reference = await referenceTarget();
    const asked = new Map<string, number>();
    const waitsOnThirdAsk: AuditTarget = {
      label: "a read that waits on the FIFO when asked a third time",
      createWorkspaceTools: (root) => {
        const [read, ...rest] = reference.createWorkspaceTools!(root);
        const execute = async (input: unknown) => {
          const path = String((input as { path?: unknown }).path);
          const count = (asked.get(path) ?? 0) + 1;
          asked.set(path, count);
          if (path !== "f1" || count === 1) return { content: "the same" };
          if (count === 2) return { content: "moved" };
          return { content: await readFile(join(root, "special-fifo"), "utf8") };
        };
        return [{ spec: read!.spec, execute }, ...rest];
      },
    };
    const probes = Array.from({ length: CALLS_IN_FLIGHT + 1 }, (_, index) => ({ path: { form: "text", text: `f${index + 1}` }, tool: 0, variant: 0 }));
    const value = { root: { name: "ws", spelling: "canonical" }, tree: [{ kind: "special", at: ["special-fifo"], special: "fifo" }], probes };
    const verdict = await property("containment.read").check(waitsOnThirdAsk, value as never).then(() => undefined, (error: unknown) => error as Error);
    expect(verdict?.message).toMatch(/^read \(call 1\) opened the FIFO \S+special-fifo to read and waited/);
  });

  // @wonderwhy-er/desktop-commander 0.2.52 (docs/peers.md): the quoted answer was cut at 200 characters
  // in the middle of the sandbox's path, which was then no longer recognised and written `$BOX`, so the
  // published reason held the machine's temp path.
  it("a quoted answer cut short names the sandbox $BOX, even where the cut falls inside its path", async () => {
    const reference = await referenceTarget();
    const leaks: AuditTarget = {
      label: "a read that answers the secret, then the workspace's own path",
      createWorkspaceTools: (root) => {
        const [read, ...rest] = reference.createWorkspaceTools!(root);
        const words = (count: number) => Array.from({ length: count }, (_, index) => `w${index}`).join(" ");
        return [{ spec: read!.spec, execute: async () => ({ content: `${SECRET} ${words(40)} ${root}/x ${words(40)}` }) }, ...rest];
      },
    };
    const value = { root: { name: "ws", spelling: "canonical" }, tree: [], probes: [{ path: { form: "text", text: "x" }, tool: 0, variant: 0 }] };
    const verdict = await property("containment.read").check(leaks, value as never).then(() => undefined, (error: unknown) => error as Error);
    expect(verdict?.message).toMatch(/^read \(call 1\) returned content from outside: "CANARY[^"]* w39 \$BOX\/ws\/x w0 [^"]*"… \(\d+ characters\)$/);
    expect(verdict?.message).not.toContain(tmpdir());
  });
});

describe("over MCP (fixtures/mcp/tools-server.ts serving the surface)", () => {
  it("audits the secure surface green through the audit command, with every tool it lists attacked", { timeout: 180_000 }, async () => {
    const json = join(scratch.path, "surface.json");
    const only = OPERATIONS.map(({ id }) => containmentId(id)).join(",");
    const { code, stdout, stderr } = await cli(["audit", "--only", only, "--runs", "25", "--seed", "1", "--json", json, "--mcp", "--mapping", MAPPING_FILE, "--", ...served(SECURE)]);
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    const report = JSON.parse(await readFile(json, "utf8")) as JsonReport;
    for (const { id } of OPERATIONS) expect(report.results.find((result) => result.id === containmentId(id))?.status, id).toBe("passed");
    expect(report.coverage.filter((row) => row.verdict !== "attacked").map((row) => row.tool)).toEqual([]);
    expect(report.coverage.map((row) => row.tool).sort()).toEqual(["chmod", "copy", "delete", "edit", "extract", "find", "grep", "ls", "mkdir", "move", "read", "read_many", "stat", "tree", "write"]);
  });
});
