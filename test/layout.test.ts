// The layout shows the architecture: every folder of src/ says in its README.md what lives there and
// what it may import, every import keeps to that, and no module imports itself round a cycle. So the
// product (gates, tools, agent, verified, index.ts) never reaches the kit, fast-check, tsx or the MCP SDK.
import { readFile, readdir } from "node:fs/promises";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

interface Folder {
  path: string;
  allowed: string[];
  files: string[];
}

async function folders(path = "src"): Promise<Folder[]> {
  const entries = await readdir(path, { withFileTypes: true });
  const readme = await readFile(join(path, "README.md"), "utf8").catch(() => "");
  const allowed = /^May import: (.+)$/m.exec(readme)?.[1]?.split(",").map((entry) => entry.trim()) ?? [];
  const here: Folder = { path, allowed, files: entries.filter((entry) => entry.isFile() && entry.name.endsWith(".ts")).map((entry) => join(path, entry.name)) };
  const below = await Promise.all(entries.filter((entry) => entry.isDirectory()).map((entry) => folders(join(path, entry.name))));
  return [here, ...below.flat()];
}

/** Every module specifier a file names: static imports and exports, and dynamic imports of a literal. */
function specifiers(source: string): string[] {
  const found = [...source.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*"([^"]+)"|(?:^|\n)\s*import\s*"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g)];
  return found.map((match) => match[1] ?? match[2] ?? match[3] ?? "");
}

/** The file a relative specifier names (`.js` in source stands for the `.ts` file). */
function target(from: string, specifier: string): string {
  return relative(".", resolve(dirname(from), specifier)).replace(/\.js$/, ".ts");
}

function permitted(folder: Folder, file: string, specifier: string): boolean {
  if (specifier.startsWith(".")) {
    const to = target(file, specifier);
    return dirname(to) === folder.path || folder.allowed.some((entry) => to === entry || to.startsWith(`${entry}/`));
  }
  if (specifier.startsWith("node:") || builtinModules.includes(specifier)) return folder.allowed.includes("node");
  const name = specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : (specifier.split("/")[0] ?? "");
  return folder.allowed.includes(name);
}

describe("the layout of src/", async () => {
  const all = await folders();

  it.each(all.map((folder) => [folder.path, folder] as const))("%s says what lives there and what it may import", async (path, folder) => {
    const readme = await readFile(join(path, "README.md"), "utf8");
    expect(readme).toMatch(new RegExp(`^# ${path.replaceAll("/", "\\/")}: \\S`));
    expect(folder.allowed.length, `${path}/README.md needs a "May import: …" line`).toBeGreaterThan(0);
  });

  it("every import keeps to its folder's README", async () => {
    const broken: string[] = [];
    for (const folder of all) {
      for (const file of folder.files) {
        for (const specifier of specifiers(await readFile(file, "utf8"))) {
          if (!permitted(folder, file, specifier)) broken.push(`${file} imports ${specifier}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("the product imports nothing from the kit, and neither fast-check, tsx nor the MCP SDK", () => {
    for (const folder of all.filter((candidate) => !candidate.path.startsWith("src/kit"))) {
      const kitOnly = (entry: string) => entry.startsWith("src/kit") || ["fast-check", "tsx", "@modelcontextprotocol/sdk"].includes(entry);
      expect(folder.allowed.filter(kitOnly), folder.path).toEqual([]);
    }
  });

  it("no module imports itself round a cycle", async () => {
    const graph = new Map<string, string[]>();
    for (const file of all.flatMap((folder) => folder.files)) {
      graph.set(file, specifiers(await readFile(file, "utf8")).filter((specifier) => specifier.startsWith(".")).map((specifier) => target(file, specifier)));
    }
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "open") {
        cycles.push([...path.slice(path.indexOf(file)), file].join(" -> "));
        return;
      }
      state.set(file, "open");
      for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, "done");
    };
    for (const file of graph.keys()) visit(file, []);
    expect(cycles).toEqual([]);
  });
});
