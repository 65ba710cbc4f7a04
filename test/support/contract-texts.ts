/**
 * The table of fixed texts in docs/contract.md, written from src/gates/messages.ts and the truncation
 * marker, so the document quotes exactly what the code answers and what conformance checks. `npm run
 * contract-texts` writes it; test/contract-doc.test.ts holds the document to it.
 */
import * as messages from "../../src/gates/messages.js";
import { truncationMarker } from "../../src/gates/truncate.js";
import type { GeneratedSection } from "./generated-section.js";

export const CONTRACT_TEXTS_SECTION: GeneratedSection = { file: "docs/contract.md", name: "contract-texts", command: "npm run contract-texts" };

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
