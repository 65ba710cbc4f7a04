/**
 * The tables of docs/contract.md that the code defines: the fixed texts, written from
 * src/gates/messages.ts and the truncation marker, so the document quotes exactly what the code
 * answers and what conformance checks; the operations, written from the catalogue
 * (src/kit/operations/catalog.ts), so it lists exactly the tool names and inputs the audit attacks;
 * and the consequences and threats of a failure, written from src/kit/findings/findings.ts, so it
 * states exactly the severities, weaknesses and `--fail-on` rule the reports carry.
 * `npm run contract-texts` writes them; test/contract-doc.test.ts holds the document to them.
 */
import * as messages from "../../src/gates/messages.js";
import { truncationMarker } from "../../src/gates/truncate.js";
import { ORACLES, OPERATIONS, type Role, containmentId } from "../../src/kit/operations/catalog.js";
import { CONSEQUENCES, type Consequence, DEFAULT_FAIL_ON, STRICT_FAIL_ON, THREATS, type Threat } from "../../src/kit/findings/findings.js";
import type { GeneratedSection } from "./generated-section.js";

export const CONTRACT_TEXTS_SECTION: GeneratedSection = { file: "docs/contract.md", name: "contract-texts", command: "npm run contract-texts" };
export const OPERATIONS_SECTION: GeneratedSection = { file: "docs/contract.md", name: "operations", command: "npm run contract-texts" };
export const FINDINGS_SECTION: GeneratedSection = { file: "docs/contract.md", name: "findings", command: "npm run contract-texts" };

export function renderFindings(): string {
  const cwes = (list: readonly string[]) => (list.length === 0 ? "none" : list.join(", "));
  const failOn = (consequence: Consequence) =>
    CONSEQUENCES[consequence].tier === "escape"
      ? "always fails the run"
      : DEFAULT_FAIL_ON.includes(consequence)
        ? "fails the run unless left out"
        : STRICT_FAIL_ON.includes(consequence)
          ? "a warning unless `--strict` or named"
          : "not a value: `--conformance` or `--strict` decides";
  const consequences = (Object.keys(CONSEQUENCES) as Consequence[]).map((consequence) => {
    const terms = CONSEQUENCES[consequence];
    return `| \`${consequence}\` | ${terms.meaning} | ${terms.tier} | ${terms.securitySeverity?.toFixed(1) ?? "none"} | ${cwes(terms.weaknesses)} | ${failOn(consequence)} |`;
  });
  const threats = (Object.keys(THREATS) as Threat[]).map((threat) => `| \`${threat}\` | ${THREATS[threat].meaning} | ${cwes(THREATS[threat].weaknesses)} |`);
  return [
    "| consequence | what the user lost, as observed | tier | `security-severity` | CWE | by default |",
    "|---|---|---|---|---|---|",
    ...consequences,
    "",
    "| threat | what the attacker needs | CWE |",
    "|---|---|---|",
    ...threats,
  ].join("\n");
}

/** How a module's tool takes each role: the field of its input. */
const FIELD: Record<Role, string> = {
  path: "`path`",
  paths: "`paths` (an array)",
  source: "`source`",
  destination: "`destination`",
  pattern: "`pattern`",
  content: "`content`",
  oldText: "`oldText`",
  newText: "`newText`",
  archive: "`archive` (a tar in the workspace)",
};

export function renderOperations(): string {
  const rows = OPERATIONS.map((operation) => {
    const names = operation.moduleNames.map((name) => `\`${name}\``).join(", ");
    const fields = operation.roles.map((role) => FIELD[role]).join(", ");
    const rules = operation.oracles.map((id) => `${ORACLES[id].rule} (${ORACLES[id].consequence})`).join("; ");
    return `| \`${containmentId(operation.id)}\` | ${operation.does} | ${names} | ${fields} | ${rules} |`;
  });
  return ["| property | a tool that | `spec.name` in a module | input | rules (consequence of a breach) |", "|---|---|---|---|---|", ...rows].join("\n");
}

/** Which conformance property checks each text; the others are the reference's wording, not checked. */
const CHECKED_BY: Partial<Record<keyof typeof messages, string>> = {
  INVALID_READ_INPUT: "`conformance.fields`",
  INVALID_WRITE_INPUT: "`conformance.fields`",
  INVALID_BASH_INPUT: "`conformance.fields`",
};

export function renderContractTexts(): string {
  const code = (text: string) => `\`${JSON.stringify(text)}\``;
  // Sorted: a module namespace lists its names sorted under Node, in source order under vite.
  const rows = Object.entries(messages).sort(([a], [b]) => a.localeCompare(b)).map(([name, text]) => `| \`${name}\` | ${code(text)} | ${CHECKED_BY[name as keyof typeof messages] ?? "not checked (the reference's wording)"} |`);
  const marker = `\\n${truncationMarker(0).replace("0", "N")}\\n`;
  return [
    "| constant (src/gates/messages.ts) | text (JSON string) | checked by |",
    "|---|---|---|",
    ...rows,
    `| \`truncationMarker(N)\`, between head and tail | \`"${marker}"\` (N = characters dropped) | \`conformance.truncation\` |`,
  ].join("\n");
}
