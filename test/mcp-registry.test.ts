// Needs the npm registry: installs @modelcontextprotocol/server-filesystem, pinned as in the gallery,
// into a temp project. Run with `npm run test:registry` (WORKSPACE_GATES_REGISTRY=1), as CI does after
// `npm test`; `npm test` skips it, with the reason in its name.
import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ADAPTERS_FOLDER, type McpPeer, PEERS } from "../fixtures/peers/catalog.js";
import type { JsonReport } from "../src/kit/audit/reports/report.js";
import { cli } from "./support/cli.js";
import { FILESYSTEM_SERVER_MAPPING } from "../src/kit/mcp/mapping.js";
import { mcpTarget } from "../src/kit/mcp/target.js";
import { loadTarget } from "../src/kit/operations/target.js";
import { SECRET, type Sandbox, createSandbox } from "../src/kit/sandbox/sandbox.js";
import { materialize } from "../src/kit/sandbox/tree.js";
import { namedTwins } from "../src/kit/sandbox/root-twins.js";
import type { ControlRace } from "../src/kit/toctou/command.js";
import { DEFAULT_RACE_BUDGET } from "../src/kit/toctou/flags.js";
import type { RaceReport } from "../src/kit/toctou/race.js";
import { type InstalledServer, installOfficialServer } from "./support/official-server.js";
import { twinOf } from "./support/official-seeds.js";

// The gallery's packages reached through fixtures/peers/adapters: an adapter module, or a server's launcher.
const ADAPTED = [
  "@google/gemini-cli-core",
  "just-bash",
  "bash-tool",
  "@openai/agents-core",
  "@fastify/send",
  "@mariozechner/pi-coding-agent",
  "@wonderwhy-er/desktop-commander",
];

const GALLERY = ADAPTED.map((name) => {
  const peer = PEERS.find((candidate) => candidate.name === name);
  if (peer === undefined) throw new Error(`fixtures/peers/catalog.ts pins no ${name}`);
  return peer;
});
const DESKTOP_COMMANDER = GALLERY.find((peer): peer is McpPeer => peer.kind === "mcp");

const REGISTRY = process.env.WORKSPACE_GATES_REGISTRY === "1";

/** The gallery's packages installed into a temp project beside a copy of the adapters; answers the project. */
async function installGallery(): Promise<string> {
  const project = await mkdtemp(join(tmpdir(), "workspace-gates-gallery-"));
  await writeFile(join(project, "package.json"), '{ "type": "module" }\n');
  try {
    await cp(ADAPTERS_FOLDER, join(project, "adapters"), { recursive: true });
    await promisify(execFile)("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", ...GALLERY.map((peer) => `${peer.name}@${peer.version}`)], { cwd: project });
  } catch (error) {
    await rm(project, { recursive: true, force: true });
    throw error;
  }
  return project;
}

// Both installs wait on the registry, so they start together as the file loads: the gallery's
// downloads go on while the official server is raced and audited. Each is installed once; a failed
// one fails its describe's beforeAll (the catch only keeps it from being reported unhandled before).
const officialInstall = REGISTRY ? installOfficialServer() : undefined;
const galleryInstall = REGISTRY ? installGallery() : undefined;
for (const install of [officialInstall, galleryInstall]) install?.catch(() => undefined);
// Removed once both are done, whichever describes ran: a run filtered with -t still started both.
afterAll(async () => {
  await (await officialInstall?.catch(() => undefined))?.remove();
  const gallery = await galleryInstall?.catch(() => undefined);
  if (gallery !== undefined) await rm(gallery, { recursive: true, force: true });
}, 600_000);

describe.runIf(REGISTRY)(
  "the official MCP filesystem server, installed from the registry (skipped without WORKSPACE_GATES_REGISTRY=1: needs the npm registry)",
  () => {
    let project: string;
    let official: InstalledServer;
    let server: string[];
    beforeAll(async () => {
      project = await mkdtemp(join(tmpdir(), "workspace-gates-registry-"));
      official = await (officialInstall as Promise<InstalledServer>);
      server = official.words;
    }, 180_000);
    afterAll(async () => {
      await rm(project, { recursive: true, force: true });
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

    // One seed of `npm run official-seeds` (docs/audit-budget.md): the default audit, no budget flag.
    it("is failed by the default audit, with a replay that reproduces the escape", { timeout: 240_000 }, async () => {
      const json = join(project, "report.json");
      const first = await cli(["audit", "--seed", "1", "--json", json, "--mcp", "--", ...server]);
      expect(first.code, first.stderr).toBe(1);
      const failure = (JSON.parse(await readFile(json, "utf8")) as JsonReport).results.find((result) => result.id === "containment.write");
      expect(failure?.status).toBe("failed");
      // Shrunk to the one link the escape needs, to the quote or the space twin.
      expect(twinOf(failure)).toMatch(/['\s]$/);
      const again = await cli([...(failure?.replay as string).replace("'{root}'", "{root}").split(" ").slice(2)]);
      expect(again.code).toBe(1);
      expect(again.stdout).toContain((failure?.counterexample as string).split("\n").join("\n      "));
    });
  },
);

// The gallery's adapters (fixtures/peers/adapters), each driven through one planted escape: a link
// inside the root to the outside canary directory, or a `..` past the root. Where the package
// confines, its own check must refuse it, so an adapter that went around that check fails here; where
// it confines nothing by design (pi-coding-agent), the escape goes through, so an adapter that added
// a check of its own fails here too.

describe.runIf(REGISTRY)(
  "the gallery's adapters, installed from the registry (skipped without WORKSPACE_GATES_REGISTRY=1: needs the npm registry)",
  () => {
    let project: string;
    let box: Sandbox;
    const adapter = (file: string) => loadTarget(join(project, "adapters", file));
    const tools = async (file: string) => Object.fromEntries(((await adapter(file)).createWorkspaceTools?.(box.root) ?? []).map((tool) => [tool.spec.name, tool]));
    const outside = () => join(box.root, "..", "outside");
    beforeAll(async () => {
      project = await (galleryInstall as Promise<string>);
    }, 600_000);
    beforeEach(async () => {
      box = await createSandbox("workspace-gates-gallery-");
      await materialize([{ kind: "symlink", at: ["l"], target: { form: "relative", area: "outside", path: [] } }], box);
    });
    afterEach(async () => {
      await box.dispose();
    });

    it("@google/gemini-cli-core: isWithinRoot keeps the root's parent out, and the file tools' resolution refuses a write through the link", async () => {
      const gemini = await adapter("gemini-cli-core.mjs");
      // isWithinRoot(pathToCheck, rootDirectory): the other order would call the root inside its own child.
      expect(gemini.isInside?.(join(box.root, "sub"), box.root)).toBe(false);
      await expect(gemini.workspacePath?.(box.root, "l/new.txt", true)).rejects.toThrow();
    });

    it("just-bash: ReadWriteFs refuses a write through the link, OverlayFs a read", async () => {
      const { write, overlay_read: overlayRead } = await tools("just-bash.mjs");
      expect(await write?.execute({ path: "l/new.txt", content: "escaped" })).toMatchObject({ isError: true });
      const read = await overlayRead?.execute({ path: "l/secret.txt" });
      expect(read?.content).not.toContain(SECRET);
      expect(await box.canaryChanges()).toEqual([]);
    });

    it("bash-tool: writeFile refuses the link, and bash's cat reads nothing through it", async () => {
      const { write, bash } = await tools("bash-tool.mjs");
      expect(await write?.execute({ path: "l/new.txt", content: "escaped" })).toMatchObject({ isError: true });
      expect((await bash?.execute({ command: "cat l/secret.txt" }))?.content).not.toContain(SECRET);
      expect(await box.canaryChanges()).toEqual([]);
    });

    it("@openai/agents-core: the session refuses a path through the link, and create_file a write through it", async () => {
      await expect((await adapter("openai-agents-core.mjs")).workspacePath?.(box.root, "l/new.txt", true)).rejects.toThrow(/escapes the workspace root/);
      const { write } = await tools("openai-agents-core.mjs");
      expect(await write?.execute({ path: "l/new.txt", content: "escaped" })).toMatchObject({ isError: true });
      expect(await box.canaryChanges()).toEqual([]);
    });

    it("@fastify/send: a request that climbs past the root is refused (403)", async () => {
      await expect((await adapter("fastify-send.mjs")).workspacePath?.(box.root, "../outside/secret.txt", false)).rejects.toThrow(/403/);
    });

    it("@mariozechner/pi-coding-agent: confines nothing, so the climb reads the outside canary", async () => {
      const { read } = await tools("pi-coding-agent.mjs");
      expect((await read?.execute({ path: "../outside/secret.txt" }))?.content).toContain(SECRET);
    });

    it("@wonderwhy-er/desktop-commander: the launcher's allowed directory refuses a write past the root", { timeout: 120_000 }, async () => {
      const server = DESKTOP_COMMANDER?.command.map((word) => word.replaceAll("{install}", project)) ?? [];
      const target = mcpTarget(server, FILESYSTEM_SERVER_MAPPING);
      try {
        const [, write] = target.createWorkspaceTools?.(box.root) ?? [];
        expect(await write?.execute({ path: join(outside(), "new.txt"), content: "escaped" })).toMatchObject({ isError: true });
        expect(await box.canaryChanges()).toEqual([]);
      } finally {
        await target.dispose();
      }
    });
  },
);
