// docs/contract.md says what the code does: its texts come from the code, and it names every property
// and every name a counterexample uses.
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { CONTRACT_TEXTS_SECTION, FINDINGS_SECTION, OPERATIONS_SECTION, renderContractTexts, renderFindings, renderOperations } from "./support/contract-texts.js";
import { readSection, wrapSection } from "./support/generated-section.js";
import { PROPERTIES } from "../src/kit/audit/properties/index.js";
import { namedTwins } from "../src/kit/sandbox/root-twins.js";
import * as messages from "../src/gates/messages.js";
import { FILESYSTEM_SERVER_MAPPING, parseMapping } from "../src/kit/mcp/mapping.js";
import { RACE_OPERATIONS } from "../src/kit/toctou/race.js";

const doc = await readFile(CONTRACT_TEXTS_SECTION.file, "utf8");

describe("docs/contract.md", () => {
  it("quotes exactly the texts of src/gates/messages.ts (npm run contract-texts)", () => {
    expect(readSection(doc, CONTRACT_TEXTS_SECTION)).toBe(wrapSection(CONTRACT_TEXTS_SECTION, renderContractTexts()));
    for (const text of Object.values(messages)) expect(doc).toContain(`\`${JSON.stringify(text)}\``);
    expect(doc).toContain('`"\\n[truncated N characters]\\n"`');
  });

  it("lists every operation of the catalogue, the tool names a module gives it and the input each takes (npm run contract-texts)", () => {
    expect(readSection(doc, OPERATIONS_SECTION)).toBe(wrapSection(OPERATIONS_SECTION, renderOperations()));
  });

  it("lists every consequence and threat of a failure with its severity, weaknesses and --fail-on rule (npm run contract-texts)", () => {
    expect(readSection(doc, FINDINGS_SECTION)).toBe(wrapSection(FINDINGS_SECTION, renderFindings()));
  });

  it.each(PROPERTIES.map((property) => [property.id, property.kind] as const))("names %s (%s)", (id) => {
    expect(doc).toContain(`\`${id}\``);
  });

  it("explains every sibling a counterexample may name", () => {
    const twins = namedTwins("ws");
    twins.forEach((name, index) => expect(doc, `sibling${index}`).toContain(`\`${name}\``));
    expect(doc).toContain(`\`sibling0\` … \`sibling${twins.length - 1}\``);
  });

  it("shows the mapping file with the defaults the code fills in", () => {
    const example = /### The mapping file[\s\S]*?```json\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(parseMapping(example ?? "", "docs/contract.md")).toEqual({
      ...FILESYSTEM_SERVER_MAPPING,
      read: { ...FILESYSTEM_SERVER_MAPPING.read, named: true },
      write: { ...FILESYSTEM_SERVER_MAPPING.write, named: true },
      mkdir: { ...FILESYSTEM_SERVER_MAPPING.mkdir, named: true },
      tools: {
        rename_entry: { operation: "move", arguments: { source: "from_path", destination: "to_path" }, fixed: { overwrite: false } },
        save_all: { operation: "write", arguments: { items: "entries", path: "target", content: "body" }, fixed: {} },
        patcher: { operation: "write", arguments: { patch: "input" }, fixed: {}, patchForm: "envelope" },
        open_resource: { operation: "read", arguments: { path: "location" }, fixed: {}, spelling: "file-uri" },
        run_query: { exclude: "queries a database, not the workspace" },
      },
      resources: {
        "notes://{vault}/{+note}": { operation: "read", path: "note", fixed: { vault: "main" }, paths: "relative" },
        "folders://{+dir}": { operation: "list", path: "dir", fixed: {} },
        "db://{table}": { exclude: "a database table, not a file" },
      },
      errorText: "^Error:",
    });
  });

  it("lists every operation the TOCTOU race makes, in the order it makes them", () => {
    const table = /### The TOCTOU race on an MCP server[\s\S]*?\| operation \|[^\n]*\n\|[^\n]*\n((?:\|[^\n]*\n)+)/.exec(doc)?.[1] ?? "";
    expect(table.split("\n").filter((row) => row !== "").map((row) => /^\| `([^`]+)`/.exec(row)?.[1])).toEqual([...RACE_OPERATIONS]);
  });
});
