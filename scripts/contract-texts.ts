// `npm run contract-texts`: rewrites the table of fixed texts in docs/contract.md from the code.
import { readFile, writeFile } from "node:fs/promises";
import { CONTRACT_DOC, CONTRACT_TEXTS_SECTION, renderContractTexts } from "./contract-texts-table.js";
import { replaceSection } from "./readme-section.js";

await writeFile(CONTRACT_DOC, replaceSection(await readFile(CONTRACT_DOC, "utf8"), CONTRACT_TEXTS_SECTION, renderContractTexts()));
process.stdout.write(`wrote the fixed texts of ${CONTRACT_DOC}\n`);
