// `npm run corpora-doc`: replays every corpus of src/kit/corpora/ on both tool sets and writes
// docs/corpora.md from what they answered. Run it after changing a corpus or a tool, and commit the file.
import { writeFile } from "node:fs/promises";
import { GO_OS_ROOT } from "../src/kit/corpora/go-os-root.js";
import { MCP_FILESYSTEM } from "../src/kit/corpora/mcp-filesystem.js";
import { CORPORA_DOC, observeCorpora, renderCorporaDoc } from "../src/kit/corpora/doc.js";
import { TOOL_SETS } from "../src/kit/sandbox/tool-sets.js";

const corpora = [GO_OS_ROOT, MCP_FILESYSTEM];
await writeFile(CORPORA_DOC, renderCorporaDoc(corpora, await observeCorpora(corpora, TOOL_SETS)));
process.stdout.write(`wrote ${CORPORA_DOC}\n`);
