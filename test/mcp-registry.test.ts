// Needs the npm registry: installs @modelcontextprotocol/server-filesystem, pinned as in the gallery,
// into a temp project. Run with `npm run test:registry` (WORKSPACE_GATES_REGISTRY=1), as CI does after
// `npm test`; `npm test` skips it, with the reason in its name.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JsonReport } from "../src/kit/audit/report.js";
import { cli } from "./support/cli.js";
import { FILESYSTEM_SERVER_MAPPING } from "../src/kit/mcp/mapping.js";
import { mcpTarget } from "../src/kit/mcp/target.js";
import { createSandbox } from "../src/kit/sandbox/sandbox.js";
import { materialize } from "../src/kit/sandbox/tree.js";
import { namedTwins } from "../src/kit/sandbox/root-twins.js";
import type { ControlRace } from "../src/kit/toctou/command.js";
import { DEFAULT_RACE_BUDGET } from "../src/kit/toctou/flags.js";
import type { RaceReport } from "../src/kit/toctou/race.js";
import { type InstalledServer, installOfficialServer } from "./support/official-server.js";

describe.runIf(process.env.WORKSPACE_GATES_REGISTRY === "1")(
  "the official MCP filesystem server, installed from the registry (skipped without WORKSPACE_GATES_REGISTRY=1: needs the npm registry)",
  () => {
    let project: string;
    let official: InstalledServer;
    let server: string[];
    beforeAll(async () => {
      project = await mkdtemp(join(tmpdir(), "workspace-gates-registry-"));
      official = await installOfficialServer();
      server = official.words;
    }, 180_000);
    afterAll(async () => {
      await rm(project, { recursive: true, force: true });
      await official?.remove();
    });

    it.each(["ws'", "ws "])("writes into the sibling %j through a link inside the root: the minimal counterexample", { timeout: 60_000 }, async (sibling) => {
      const index = namedTwins("ws").indexOf(sibling);
      expect(index).toBeGreaterThanOrEqual(0);
      const target = mcpTarget(server, FILESYSTEM_SERVER_MAPPING);
      const box = await createSandbox("workspace-gates-registry-");
      try {
        await materialize([{ kind: "symlink", at: ["l"], target: { form: "relative", area: `sibling${index}`, path: [] } }], box);
        const [, write] = target.createWorkspaceTools?.(box.root) ?? [];
        expect(await write?.execute({ path: "l/new.txt", content: "escaped" })).toMatchObject({ isError: false });
        expect(await box.canaryChanges()).toEqual([`added ${join(box.root, "..", sibling, "new.txt")}`]);
      } finally {
        await target.dispose();
        await box.dispose();
      }
    });

    it("loses files and directories outside to the race at toctou's default budget, beside a control that escaped too", { timeout: 120_000 }, async () => {
      const json = join(project, "race.json");
      const { code, stderr } = await cli(["toctou", "--json", json, "--mcp", "--", ...server]);
      expect(code, stderr).toBe(1);
      const report = JSON.parse(await readFile(json, "utf8")) as RaceReport & { control: ControlRace };
      expect(report.budget).toEqual(DEFAULT_RACE_BUDGET);
      // Every operation the server has a tool for is raced (create_directory is its mkdir, edit_file its
      // edit, move_file its move); it has no copy and no delete.
      expect(Object.keys(report.notApplicable)).toEqual(["copy.destination", "delete.directory"]);
      expect(report.perOperation["write.directory"]?.escapes).toBeGreaterThan(0);
      expect(report.perOperation["mkdir.directory"]?.escapes).toBeGreaterThan(0);
      expect(report.control.escapes).toBeGreaterThan(0);
    });

    it("is failed by the audit, with a replay that reproduces the escape", { timeout: 240_000 }, async () => {
      const json = join(project, "report.json");
      const first = await cli(["audit", "--only", "containment.write", "--seed", "1", "--runs", "1000", "--json", json, "--mcp", "--", ...server]);
      expect(first.code, first.stderr).toBe(1);
      const [failure] = (JSON.parse(await readFile(json, "utf8")) as JsonReport).results;
      expect(failure?.counterexample).toMatch(new RegExp(`sibling(${["ws'", "ws "].map((twin) => namedTwins("ws").indexOf(twin)).join("|")})\\b`));
      const again = await cli([...(failure?.replay as string).replace("'{root}'", "{root}").split(" ").slice(2)]);
      expect(again.code).toBe(1);
      expect(again.stdout).toContain((failure?.counterexample as string).split("\n").join("\n      "));
    });
  },
);
