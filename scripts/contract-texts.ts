// `npm run contract-texts`: rewrites the tables of docs/contract.md that the code defines (its fixed texts, its operations, the consequences and threats of a failure).
import { CONTRACT_TEXTS_SECTION, FINDINGS_SECTION, OPERATIONS_SECTION, renderContractTexts, renderFindings, renderOperations } from "../test/support/contract-texts.js";
import { writeSectionToFile } from "../test/support/generated-section.js";

await writeSectionToFile(CONTRACT_TEXTS_SECTION, renderContractTexts());
await writeSectionToFile(OPERATIONS_SECTION, renderOperations());
await writeSectionToFile(FINDINGS_SECTION, renderFindings());
process.stdout.write(`wrote the fixed texts, the operations and the findings of ${CONTRACT_TEXTS_SECTION.file}\n`);
