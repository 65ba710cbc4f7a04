/**
 * The test MCP server (fixtures/mcp/tools-server.ts) and the modules it serves, compiled to plain
 * JavaScript for the tests that start it: under `node --import tsx` most of a start is tsx's loader
 * (about three times the CPU of the compiled server's whole start), and an MCP audit starts a server
 * per sandbox root, again after every death. The compiled server runs the same source; the tests that
 * need a user's own command line (a replay printed as typed) name the TypeScript file.
 */
import { buildSync } from "esbuild";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/** Beside the packages the bundles leave out (`LOADERS`), so that their imports resolve as the sources' do. */
const OUT = "node_modules/.cache/workspace-gates-tests";

/**
 * The packages a bundle leaves out: the loaders of a TypeScript target (operations/target.ts imports
 * them only to load one), which find their own files beside them. The rest, the MCP SDK and zod above
 * all, go in: one file parsed instead of hundreds resolved and read, 0.2 s of CPU a server start
 * instead of 0.35, and an MCP audit starts one per sandbox root.
 */
const LOADERS = ["tsx", "esbuild"];
/** For the CommonJS packages bundled in, whose `require` of node's modules an ES module lacks. */
const REQUIRE = 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);';

const built = new Map<string, string>();

/**
 * `source` (a .ts file of this repository) bundled into one .mjs file, its packages with it but `LOADERS`;
 * the path returned is relative to the repository. Built once per test process (a file's change shows
 * at the next run), written whole under a name of its own then renamed, so that two workers building
 * the same module never read half a file.
 */
export function compiled(source: string): string {
  const known = built.get(source);
  if (known !== undefined) return known;
  const out = join(OUT, relative(".", resolve(source)).replace(/\.ts$/, ".mjs"));
  const [file] = buildSync({ entryPoints: [source], bundle: true, platform: "node", format: "esm", external: LOADERS, banner: { js: REQUIRE }, write: false, outfile: out, logLevel: "error" }).outputFiles;
  if (file === undefined) throw new Error(`esbuild wrote nothing for ${source}`);
  mkdirSync(dirname(out), { recursive: true });
  const partial = `${out}.${process.pid}.partial`;
  writeFileSync(partial, file.contents);
  renameSync(partial, out);
  built.set(source, out);
  return out;
}

/** The command that serves `module`'s tools (`reference`: this package's) over MCP, compiled; `extra` are the server's flags. */
export const served = (module: string, ...extra: string[]): string[] => ["node", compiled("fixtures/mcp/tools-server.ts"), module === "reference" ? module : compiled(module), "{root}", ...extra];

