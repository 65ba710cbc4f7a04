/**
 * The official MCP filesystem server at the gallery's pinned version (fixtures/peers/catalog.ts),
 * installed from the npm registry into a temp project: what the registry tests, the race figures, the
 * bench's `--registry` rows and the seed table audit. Needs the registry; nothing in `npm test` calls it.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { PEERS } from "../../fixtures/peers/catalog.js";

export const OFFICIAL_SERVER = "@modelcontextprotocol/server-filesystem";

export interface InstalledServer {
  /** `@modelcontextprotocol/server-filesystem 2026.8.31`. */
  name: string;
  version: string;
  /** The server's command, `{root}` for the workspace root, as `audit --mcp --` takes it. */
  words: string[];
  /** Removes the temp project. */
  remove(): Promise<void>;
}

export async function installOfficialServer(): Promise<InstalledServer> {
  const pinned = PEERS.find((peer) => peer.name === OFFICIAL_SERVER);
  if (pinned === undefined) throw new Error(`fixtures/peers/catalog.ts pins no ${OFFICIAL_SERVER}`);
  const project = await mkdtemp(join(tmpdir(), "workspace-gates-official-"));
  try {
    await writeFile(join(project, "package.json"), "{}\n");
    await promisify(execFile)("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", `${OFFICIAL_SERVER}@${pinned.version}`], { cwd: project });
  } catch (error) {
    await rm(project, { recursive: true, force: true });
    throw error;
  }
  return {
    name: `${OFFICIAL_SERVER} ${pinned.version}`,
    version: pinned.version,
    words: ["node", join(project, "node_modules", OFFICIAL_SERVER, "dist", "index.js"), "{root}"],
    remove: () => rm(project, { recursive: true, force: true }),
  };
}
