// `npm run contract-texts`: rewrites the table of fixed texts in docs/contract.md from the code.
import { CONTRACT_TEXTS_SECTION, renderContractTexts } from "../test/support/contract-texts.js";
import { writeSectionToFile } from "../test/support/generated-section.js";

await writeSectionToFile(CONTRACT_TEXTS_SECTION, renderContractTexts());
process.stdout.write(`wrote the fixed texts of ${CONTRACT_TEXTS_SECTION.file}\n`);
