// `npm run contract-texts`: rewrites the tables of docs/contract.md that the code defines (its fixed texts, its operations).
import { CONTRACT_TEXTS_SECTION, OPERATIONS_SECTION, renderContractTexts, renderOperations } from "../test/support/contract-texts.js";
import { writeSectionToFile } from "../test/support/generated-section.js";

await writeSectionToFile(CONTRACT_TEXTS_SECTION, renderContractTexts());
await writeSectionToFile(OPERATIONS_SECTION, renderOperations());
process.stdout.write(`wrote the fixed texts and the operations of ${CONTRACT_TEXTS_SECTION.file}\n`);
