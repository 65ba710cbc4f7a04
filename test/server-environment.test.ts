// The server's environment is part of the sandbox (issue 51): a server the audit starts on a case's
// root gets a HOME and a TMPDIR of that case's sandbox, outside the workspace, whose home holds a
// canary; so a server that expands `~` after its check is caught over MCP as the same tools are in
// process, and never reaches the home of the user who runs the audit.
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PROPERTIES } from "../src/kit/audit/properties/index.js";
import { withHome } from "../src/kit/audit/properties/containment.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { readMapping } from "../src/kit/mcp/mapping.js";
import { mcpTarget, serverEnvironment } from "../src/kit/mcp/target.js";
import { CANARY_FILE, SECRET, type Sandbox, createSandbox } from "../src/kit/sandbox/sandbox.js";
import { startCli } from "./support/child-cli.js";
import { MAPPING_FILE, served } from "./support/surface.js";

const containmentRead = PROPERTIES.find((property) => property.id === "containment.read")!;
const FORK = "fixtures/vulnerable/home-expanded.ts";

describe("what a server started on a sandbox's root is given", () => {
  let box: Sandbox;
  beforeEach(async () => {
    box = await createSandbox("workspace-gates-environment-test-");
  });
  afterEach(async () => {
    await box.dispose();
  });

  it("a HOME holding a canary and a TMPDIR, in the sandbox and outside the workspace, and npm's cache where it was", async () => {
    const environment = serverEnvironment(box.rootAlias);
    const base = dirname(box.outside);
    for (const variable of ["HOME", "TMPDIR"] as const) {
      expect(environment[variable]?.startsWith(`${base}/`), variable).toBe(true);
      expect(environment[variable]?.startsWith(`${box.root}/`), variable).toBe(false);
    }
    expect(readFileSync(join(environment.HOME as string, CANARY_FILE), "utf8")).toContain(SECRET);
    expect(environment.npm_config_cache).toBeDefined();
    expect(environment.npm_config_cache?.startsWith(base)).toBe(false);
  });

  it("keeps them, and the canary, when the sandbox is reset for the next case", async () => {
    const { HOME } = serverEnvironment(box.root);
    expect(await box.reset({ canariesChecked: true })).toBe(true);
    expect(await realpath(HOME as string)).toBe(HOME);
  });

  it("nothing for a root of no sandbox", async () => {
    expect(serverEnvironment(dirname(box.outside))).toEqual({});
  });
});

describe("a server that expands ~ after its check", () => {
  // The audit as a user runs it, on its main thread: in a worker thread (Stryker's test pool) the
  // HOME a case sets is that thread's copy of the environment, which os.homedir() never reads.
  it("is caught in process", { timeout: 120_000 }, async () => {
    const tmp = await mkdtemp(join(tmpdir(), "workspace-gates-home-"));
    try {
      const { code, stdout, stderr } = await startCli(["audit", FORK, "--only", "containment.read", "--runs", "5", "--seed", "1"], tmp).ended;
      expect(code, `${stdout}${stderr}`).toBe(1);
      expect(stdout).toMatch(/containment\.read\s+FAILED/);
      expect(stdout).toContain('"path":"~/secret.txt"');
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });

  it("is caught over MCP, reaching the home the audit gave it", { timeout: 120_000 }, async () => {
    const target = mcpTarget(served(FORK), await readMapping(MAPPING_FILE));
    try {
      await target.prepare();
      const result = await runProperty(containmentRead, target, { seed: 1, runs: 5, stopAtFirstFailure: true });
      expect(result.status, result.reason).toBe("failed");
      expect(result.consequence).toBe("outside read");
      expect(result.reason).toContain(`${SECRET} home`);
      expect(result.counterexample).toContain('"path":"~/secret.txt"');
    } finally {
      await target.dispose();
    }
  });
});

describe("the home of cases run side by side in this process", () => {
  // Regression: a case that ended put HOME back to what it was when it began, which could be the
  // outside of a case already ended (its box disposed): a case still running then read `~` from a
  // directory that was gone, and a tool that expands `~` after its check passed at random.
  it("is always the home of a case still running, and what it was once none runs", async () => {
    const before = process.env.HOME;
    const ends = new Map<string, () => void>();
    const seen: Record<string, string | undefined> = {};
    const start = (home: string) => {
      let end = () => {};
      const ended = new Promise<void>((resolve) => (end = resolve));
      const running = withHome(home, async () => {
        await ended;
        seen[home] = process.env.HOME;
      });
      ends.set(home, end);
      return running;
    };
    const p = start("/p");
    const r = start("/r");
    const q = start("/q");
    ends.get("/r")?.();
    await r;
    ends.get("/q")?.();
    await q;
    expect(process.env.HOME).toBe("/p");
    ends.get("/p")?.();
    await p;
    expect(seen["/p"]).toBe("/p");
    expect(process.env.HOME).toBe(before);
  });
});
